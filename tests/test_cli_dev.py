"""``checkpoint-lab dev check``: every fixture graded as its folder's expected.json says, names that
agree with their rows; a fixture graded otherwise, a row without a file or a name that lies makes
it fail."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from graders.checks import EXERCISES
from graders.cli import dev as cli_dev
from graders.cli import main

ROOT = Path(__file__).resolve().parents[1]
L2 = ["l2_atomic_save", "l2_save_point_a", "l2_atomic_save_hidden", "l2_save_point_a_hidden"]
L3 = "03_power_cut"


def row(*failing: str, checks=L2) -> dict[str, bool]:
    return {c: c not in failing for c in checks}


@pytest.mark.parametrize("name, truth, problem", [
    ("passes_timestamp", row(), None),
    ("passes_timestamp", row("l2_atomic_save"), "named passes_, but its row fails l2_atomic_save"),
    ("starter", row(*L2), None),
    ("cheat_anything", row(*L2), None),
    ("fails_all_pretend", row("l2_atomic_save"), "named to fail every check, but its row passes"),
    ("fails_atomic_copyfile", row("l2_atomic_save", "l2_atomic_save_hidden"), None),
    ("fails_atomic_copyfile", row("l2_save_point_a"), "named for l2_atomic_save"),
    ("fails_save_point_a_late", row(*L2), None),  # the name says one; its row may say more
    ("fails_save_point_a_late", row("l2_atomic_save"), "named for l2_save_point_a"),
    ("fails_fixed_values", row("l1_saves_all_six", checks=["l1_saves_all_six"]), None),
    ("fails_fixed_values", row(checks=["l1_saves_all_six"]), "its row passes every check"),
    ("fails_file_only", row("l3_file_synced", checks=["l3_file_synced", "l3_directory_synced"]),
     None),
    ("copy_over", row("l2_atomic_save"), "does not say its outcome"),
    ("passes_nothing_named", {}, "names no check"),
])
def test_a_name_must_agree_with_its_row(name, truth, problem):
    found = cli_dev.name_problem(name, truth)
    assert (found is None) if problem is None else (problem in (found or "")), found


def test_every_fixture_folder_has_a_table_whose_names_agree():
    for notebook in EXERCISES:
        folder = ROOT / "tests" / "fixtures" / notebook
        for where in (folder, folder / "adversarial"):
            truth = cli_dev.truth_of(where)
            assert sorted(truth) == sorted(p.stem for p in where.glob("*.py")), where
            for name, checks in truth.items():
                assert cli_dev.name_problem(name, checks) is None, (where, name)


def _checkout(tmp_path: Path) -> Path:
    """A checkout beside this one: its exercises and solutions, Level 3's fixtures replaced."""
    root = tmp_path / "checkout"
    (root / "tests" / "fixtures").mkdir(parents=True)
    for name in ("exercises", "solutions"):
        (root / name).symlink_to(ROOT / name)
    for notebook in EXERCISES:
        if notebook != L3:
            (root / "tests" / "fixtures" / notebook).symlink_to(ROOT / "tests" / "fixtures" /
                                                                notebook)
    return root


@pytest.mark.sandbox
@pytest.mark.usefixtures("sandbox_here")
def test_a_fixture_graded_otherwise_than_its_table_says_makes_dev_check_fail(tmp_path, capsys):
    root = _checkout(tmp_path)
    folder = root / "tests" / "fixtures" / L3
    folder.mkdir()
    starter = ROOT / "tests" / "fixtures" / L3 / "starter.py"
    reference = ROOT / "solutions" / f"{L3}.py"
    shutil.copy(starter, folder / "starter.py")
    shutil.copy(starter, folder / "passes_but_does_not.py")
    shutil.copy(reference, folder / "passes_really.py")
    shutil.copy(reference, folder / "fails_file_misnamed.py")
    ids = [c.id for c in EXERCISES[L3].checks]
    truth = {"starter": dict.fromkeys(ids, False), "passes_but_does_not": dict.fromkeys(ids, True),
             "passes_really": dict.fromkeys(ids, True),
             "fails_file_misnamed": dict.fromkeys(ids, True), "ghost": dict.fromkeys(ids, True)}
    (folder / "expected.json").write_text(json.dumps(truth))
    records = tmp_path / "records.json"
    status = main(["dev", "check", "--exercise", L3, "--root", str(root), "--records",
                   str(records)])
    out = capsys.readouterr().out
    assert status == 1
    kept = json.loads(records.read_text())  # what it graded, as the suite's records keep it
    assert "bubblewrap tier" in kept["tier"] and list(kept["exercises"]) == [L3]
    graded = kept["exercises"][L3]
    assert sorted(graded["fixtures"]) == [f"tests/fixtures/{L3}/{name}.py" for name in (
        "fails_file_misnamed", "passes_but_does_not", "passes_really", "starter")]
    got = {Path(rel).stem: {c: r["passed"] for c, r in results.items()}
           for rel, results in graded["fixtures"].items()}
    assert got == {"fails_file_misnamed": dict.fromkeys(ids, True),  # the reference's code
                   "passes_but_does_not": dict.fromkeys(ids, False),  # the starter's
                   "passes_really": dict.fromkeys(ids, True), "starter": dict.fromkeys(ids, False)}
    assert all(r["passed"] for r in graded["reference"].values())
    assert not any(r["passed"] for r in graded["starter"].values())
    assert f"{L3}: FAIL (release in sync;" in out and "3/4 fixtures as named" in out
    assert "passes_but_does_not.py: l3_file_synced failed, expected.json says pass" in out
    assert "03_power_cut/expected.json: ghost has no fixture file" in out
    assert "fails_file_misnamed.py: named for l3_file_synced" in out
    assert "passes_really.py" not in out and "starter.py" not in out
