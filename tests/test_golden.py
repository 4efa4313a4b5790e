"""Every fixture's typed result held byte for byte: ``tests/golden/`` (`graders.cli.golden`).

The slow test compares the session's one ``dev check`` (`tests/graded.py`: every fixture graded
once, in the bubblewrap tier) with the golden files, without grading again; the others check the
comparison itself and that the files hold nothing of one machine.
"""

from __future__ import annotations

import json

import pytest

from graders.checks import EXERCISES
from graders.cli import golden
from graders.cli.dev import fixtures_of
from tests.conftest import ROOT


@pytest.mark.sandbox
@pytest.mark.timeout(1500)
def test_every_fixture_s_records_and_results_json_are_the_golden_ones(dev_check):
    assert dev_check.tier and "bubblewrap tier" in dev_check.tier, dev_check.said
    problems = golden.compare(ROOT, dev_check.records["exercises"])
    assert not problems, (
        f"{len(problems)} difference(s) from tests/golden/:\n" + "\n".join(problems)
        + f"\nIf the change is meant, rewrite them ({golden.UPDATE_COMMAND}, or without grading "
          f"again: {golden.UPDATE_COMMAND} --from-records {dev_check.path}) and commit the diff.")


def test_every_fixture_and_catalog_entry_has_a_golden_file_and_every_golden_file_a_fixture():
    expected = {golden.golden_path(ROOT, nb, which) for nb in EXERCISES
                for which in [*golden.RELEASED,
                              *(p.relative_to(ROOT).as_posix() for p in fixtures_of(nb))]}
    present = set((ROOT / golden.GOLDEN).rglob("*.json"))
    assert sorted(map(str, expected - present)) == [], golden.UPDATE_COMMAND
    assert sorted(map(str, present - expected)) == [], golden.UPDATE_COMMAND


def test_the_golden_files_hold_nothing_of_the_machine_that_wrote_them():
    for path in sorted((ROOT / golden.GOLDEN).rglob("*.json")):
        text = path.read_text(encoding="utf-8")
        assert str(ROOT) not in text and "/check/work" not in text, path
        assert "execution_time" not in text, path
        data = json.loads(text)
        assert golden.render(data) == text, f"{path}: not as render() writes it"
        assert [r["check_id"] for r in data["records"]] == \
            [c.id for c in EXERCISES[data["notebook"]].checks], path


def test_a_fixture_judged_on_its_threads_interleaving_keeps_its_grade_not_its_messages():
    for which in golden.SCHEDULED:
        assert (ROOT / which).is_file(), which
        data = json.loads(golden.golden_path(ROOT, "04_parallel_tool_calls", which).read_text())
        assert data["scheduled"] is True
        assert all(set(r) == {"check_id", "notebook", "title", "hidden", "points", "score",
                              "status", "cause"} for r in data["records"]), which
        assert all("output" not in t for t in data["results.json"]["tests"]), which
    others = [p for p in (ROOT / golden.GOLDEN).rglob("*.json")
              if "scheduled" in json.loads(p.read_text())]
    assert len(others) == len(golden.SCHEDULED)


def test_a_temp_name_s_random_part_and_the_checkout_s_path_are_placeholders(tmp_path):
    said = ("OSError: [Errno 18] Invalid cross-device link: '/tmp/tmpa1b_9xyz.json' -> "
            f"'checkpoint.json' in {tmp_path}/solutions/x.py")
    assert golden.stable(said, tmp_path) == (
        "OSError: [Errno 18] Invalid cross-device link: '/tmp/tmpXXXXXXXX.json' -> "
        "'checkpoint.json' in <checkout>/solutions/x.py")
    assert golden.stable("checkpoint.json.tmp and support-tickets", tmp_path) == \
        "checkpoint.json.tmp and support-tickets"


def test_a_difference_names_the_field_and_shows_a_changed_text_as_a_diff():
    old = {"records": [{"check_id": "l2_atomic_save", "score": 3.0,
                        "message": "one\ntwo\nthree"}],
           "results.json": {"tests": [{"name": "Level 2: x", "status": "passed"}]}}
    new = json.loads(json.dumps(old))
    new["records"][0]["score"] = 0.0
    new["records"][0]["message"] = "one\n2\nthree"
    new["results.json"]["tests"][0]["status"] = "failed"
    found = golden.differences(old, new)
    assert found[0] == "records[l2_atomic_save].score: golden 3.0, now 0.0"
    assert found[1].startswith("records[l2_atomic_save].message:\n")
    assert "-two" in found[1] and "+2" in found[1]
    assert found[2] == 'results.json.tests[Level 2: x].status: golden "passed", now "failed"'
    assert golden.differences(old, old) == []
    fewer = {"records": [], "results.json": old["results.json"]}
    assert golden.differences(old, fewer) == ["records: 1 items [l2_atomic_save] became 0 []"]


def test_compare_names_the_golden_file_of_a_changed_record(tmp_path):
    """A grading whose record differs fails the comparison, naming the file and the field:
    the reference of Level 1 taken from its golden file, one message changed."""
    import shutil

    notebook = "01_incomplete_checkpoint"
    kept = json.loads((ROOT / golden.GOLDEN / notebook / "reference.json").read_text())
    for folder in ("exercises", "solutions", "tests/fixtures"):
        shutil.copytree(ROOT / folder, tmp_path / folder)
    (tmp_path / "graders").symlink_to(ROOT / "graders")
    (tmp_path / golden.GOLDEN / notebook).mkdir(parents=True)
    (tmp_path / golden.GOLDEN / notebook / "reference.json").write_text(golden.render(kept))
    results = {r["check_id"]: {"check_id": r["check_id"], "passed": r["status"] == "passed",
                               "points_earned": r["score"], "message": r["message"],
                               "summary": r["summary"], "status": r["status"]}
               for r in kept["records"]}
    assert golden.compare(tmp_path, {notebook: {"reference": results}}) == []
    first = next(iter(results))
    results[first]["message"] = results[first]["summary"] = "changed"
    found = golden.compare(tmp_path, {notebook: {"reference": results}})
    assert found and all(f.startswith(f"tests/golden/{notebook}/reference.json: ") for f in found)
    assert any(f".records[{first}].message" in f or f"records[{first}].message" in f
               for f in found), found
