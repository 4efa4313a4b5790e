"""The Gradescope autograder, for real: build the zip, run its run_autograder at /autograder.

Each run unpacks the zip as Gradescope does into a temporary tree and runs ``run_autograder``
in bubblewrap with that tree bound at ``/autograder`` (the rest of the machine bound as it is;
nothing is written to a real ``/autograder``). ``/autograder/venv`` points at this test's own
Python environment (``setup.sh`` needs apt and a network, so it is only checked, not run); the
code that grades is the zip's copy (``run_autograder`` puts it first on the path).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import jsonschema
import pytest

from graders.checks import CHECKS, checks_for, grade_submission, submission_from_notebook
from graders.gradescope.results import MANIFEST_NAME, VISIBILITIES
from graders.sandbox import sandbox_problem
from tests.conftest import IN_CI, ROOT
from tests.fixtures.notebooks.course_cache import shared_course
from tests.fixtures.notebooks.submissions import (
    LEVEL1,
    LEVEL2,
    STARTER2,
    _level2,
    split_cell,
    submission_notebook,
)

pytestmark = pytest.mark.sandbox


@pytest.fixture(autouse=True, scope="module")
def _bubblewrap_here():
    """Asked when the first test runs, never at import: collecting the fast tier starts no
    bubblewrap."""
    problem = "no bwrap" if shutil.which("bwrap") is None else sandbox_problem()
    if problem:
        if IN_CI:
            pytest.fail(f"CI needs bubblewrap for the Gradescope tests: {problem}")
        pytest.skip(f"no sandbox here: {problem}")

FORMATS = ["text", "html", "simple_format", "md", "ansi"]

#: results.json as Gradescope's specs document it ("Output format"), strict about our keys.
SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "score": {"type": "number"},
        "execution_time": {"type": "number"},
        "output": {"type": "string"},
        "output_format": {"enum": FORMATS},
        "test_output_format": {"enum": FORMATS},
        "test_name_format": {"enum": FORMATS},
        "visibility": {"enum": list(VISIBILITIES)},
        "stdout_visibility": {"enum": list(VISIBILITIES)},
        "extra_data": {"type": "object"},
        "tests": {"type": "array", "items": {
            "type": "object",
            "additionalProperties": False,
            "required": ["name", "max_score", "output", "visibility"],
            "properties": {
                "score": {"type": "number"},
                "max_score": {"type": "number", "minimum": 0},
                "status": {"enum": ["passed", "failed"]},
                "name": {"type": "string", "minLength": 1},
                "name_format": {"enum": FORMATS},
                "number": {"type": "string"},
                "output": {"type": "string"},
                "output_format": {"enum": FORMATS},
                "tags": {"type": "array", "items": {"type": "string"}},
                "visibility": {"enum": list(VISIBILITIES)},
                "extra_data": {"type": "object"},
            },
        }},
        "leaderboard": {"type": "array"},
    },
    # the specs: a top-level score, or a score on every test
    "anyOf": [{"required": ["score"]},
              {"properties": {"tests": {"items": {"required": ["score"]}}}}],
}

WRITTEN = {"l1_where_resume_falls_over": 5, "l2_name_the_failures": 4}

#: Appended to the starter: writes Gradescope's files if it can, and takes the reference's code
#: from the autograder if it can see it (then it would score).
FORGE = '''
import os as _os
if _os.path.exists("/autograder/source/checkpoint-lab/solutions/02_two_latent_failures.py"):
    exec(open("/autograder/source/checkpoint-lab/solutions/02_two_latent_failures.py").read())
import json as _json
for _path in ("/autograder/results/results.json", "/autograder/source/checkpoint_lab_course.json"):
    try:
        with open(_path, "w") as _f:
            _json.dump({"score": 999, "tests": []}, _f)
    except OSError:
        pass
'''


@pytest.fixture(scope="module")
def autograder_zip(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("gradescope") / "autograder.zip"
    done = subprocess.run([sys.executable, "-m", "graders.cli", "gradescope", "--course",
                           str(shared_course().root), "-o", str(out)],
                          capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert "manually graded questions" in done.stdout
    assert "l1_where_resume_falls_over 5" in done.stdout
    return out


def _release(name: str) -> dict:
    return json.loads((ROOT / "exercises" / f"{name}.ipynb").read_text())


def _exercises(zip_path: Path) -> list[str]:
    with zipfile.ZipFile(zip_path) as archive:
        return [e["exercise"] for e in json.loads(archive.read(MANIFEST_NAME))["exercises"]]


def _course_notebooks(folder: Path) -> dict[str, dict]:
    """The course's notebooks in ``folder`` by exercise: source/ holds the reference code in
    its answer cells, release/ the starter's."""
    return {p.stem: json.loads(p.read_text()) for p in sorted(folder.glob("*.ipynb"))}


def run_autograder(zip_path: Path, tree: Path, files: dict[str, bytes]) -> dict:
    """Unpack the zip into ``tree`` as Gradescope does, hand in ``files``, run, read results."""
    (tree / "source").mkdir(parents=True)
    (tree / "results").mkdir()
    (tree / "submission").mkdir()
    with zipfile.ZipFile(zip_path) as archive:
        archive.extractall(tree / "source")
    shutil.copy(tree / "source" / "run_autograder", tree / "run_autograder")
    os.chmod(tree / "run_autograder", 0o755)
    (tree / "venv").symlink_to(sys.prefix)
    for name, data in files.items():
        (tree / "submission" / name).write_bytes(data)
    # Bind the machine's top-level entries one by one over bubblewrap's empty root, so that
    # /autograder can be made there without creating it on the real root.
    cmd = ["bwrap"]
    for top in sorted(os.listdir("/")):
        path = Path("/") / top
        if top == "autograder":
            continue
        if path.is_symlink():
            cmd += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            cmd += ["--dev-bind", str(path), str(path)]
    if os.geteuid() != 0:
        cmd += ["--unshare-user", "--uid", str(os.geteuid())]
    cmd += ["--bind", str(tree), "/autograder", "--chdir", "/autograder", "--die-with-parent",
            "/autograder/run_autograder"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    results = json.loads((tree / "results" / "results.json").read_text())
    jsonschema.validate(results, SCHEMA)
    return results


def _by_check(results: dict) -> dict[str, dict]:
    return {t["tags"][0]: t for t in results["tests"] if t["tags"][0] in CHECKS}


def _assert_same_as_grade_submission(results: dict, notebooks: dict[str, dict]) -> None:
    tests = _by_check(results)
    assert set(tests) == {c.id for e in notebooks for c in checks_for(e)}, \
        "one test per check of every exercise"
    for exercise, nb in notebooks.items():
        expected = grade_submission(submission_from_notebook(nb, exercise), exercise)
        for check_id, result in expected.items():
            test = tests[check_id]
            assert test["score"] == result.points_earned, (check_id, test["output"])
            assert test["max_score"] == CHECKS[check_id].points
            assert test["status"] == ("passed" if result.passed else "failed")
            assert result.message.split("\n")[0][:40] in " ".join(test["output"].split())
    for check_id, test in tests.items():
        wanted = "after_published" if CHECKS[check_id].hidden else "visible"
        assert test["visibility"] == wanted, check_id
    assert _score(results) == sum(t["score"] for t in tests.values())


def _score(results: dict) -> float:
    """The score Gradescope gives: no top-level score (it would tell the hidden checks before
    the grades are published), so the sum of the tests."""
    assert "score" not in results
    return sum(t["score"] for t in results["tests"])


def _assert_written_marked_by_hand(results: dict) -> None:
    written = {t["tags"][0]: t for t in results["tests"] if "manual" in t["tags"]}
    for grade_id, points in WRITTEN.items():
        assert written[grade_id]["score"] == written[grade_id]["max_score"] == 0
        assert "status" not in written[grade_id]
        assert f"marked by hand, {points:g} points" in written[grade_id]["output"]
    assert "marked by hand" in results["output"]


def test_the_zip_is_in_gradescopes_format(autograder_zip):
    with zipfile.ZipFile(autograder_zip) as archive:
        names = set(archive.namelist())
        modes = {i.filename: i.external_attr >> 16 for i in archive.infolist()}
        setup = archive.read("setup.sh").decode()
        run = archive.read("run_autograder").decode()
        manifest = json.loads(archive.read(MANIFEST_NAME))
        constraints = archive.read("checkpoint-lab/constraints.txt").decode()
    assert {"setup.sh", "run_autograder", "checkpoint-lab/pyproject.toml",
            "checkpoint-lab/graders/gradescope/results.py",
            "checkpoint-lab/solutions/02_two_latent_failures.py",
            "checkpoint-lab/fake_llm/scenarios/support-tickets.json"} <= names
    assert not [n for n in names if "__pycache__" in n]
    assert modes["setup.sh"] & 0o111 and modes["run_autograder"] & 0o111
    for name, text in (("setup.sh", setup), ("run_autograder", run)):
        assert text.startswith("#!/usr/bin/env bash\n")
        check = subprocess.run(["bash", "-n"], input=text, capture_output=True, text=True)
        assert check.returncode == 0, f"{name}: {check.stderr}"
    for wanted in ("apt-get install", "bubblewrap", "strace", "util-linux", "python3.11",
                   "-m venv /autograder/venv", '-c "$SOURCE/checkpoint-lab/constraints.txt"',
                   '-e "$SOURCE/checkpoint-lab"'):
        assert wanted in setup, f"setup.sh does not install {wanted!r}"
    assert "nbgrader==" in constraints
    assert "-m graders.gradescope /autograder" in run and "CHECKPOINT_LAB_SANDBOX=on" in run
    written = {w["grade_id"]: w["points"] for e in manifest["exercises"] for w in e["written"]}
    assert {k: written[k] for k in WRITTEN} == WRITTEN
    assert [e["exercise"] for e in manifest["exercises"]] == \
        sorted(p.stem for p in shared_course().source_dir.glob("*.ipynb"))


def test_the_reference_gets_every_point(autograder_zip, tmp_path):
    notebooks = _course_notebooks(shared_course().source_dir)
    assert list(notebooks) == _exercises(autograder_zip)
    results = run_autograder(autograder_zip, tmp_path, {
        f"{name}.ipynb": json.dumps(nb).encode() for name, nb in notebooks.items()})
    _assert_same_as_grade_submission(results, notebooks)
    assert _score(results) == sum(c.points for e in notebooks for c in checks_for(e)) > 0
    _assert_written_marked_by_hand(results)


def test_the_starter_in_a_zip_under_other_names_scores_nothing(autograder_zip, tmp_path):
    notebooks = _course_notebooks(shared_course().release_dir)
    bundle = tmp_path / "bundle.zip"
    with zipfile.ZipFile(bundle, "w") as archive:
        for index, nb in enumerate(notebooks.values()):
            archive.writestr(f"my work/attempt {index}.ipynb", json.dumps(nb))
    results = run_autograder(autograder_zip, tmp_path / "tree", {"mine.zip": bundle.read_bytes()})
    _assert_same_as_grade_submission(results, notebooks)
    assert _score(results) == 0
    assert "not passed (0/3 points)" in _by_check(results)["l2_atomic_save"]["output"]
    assert "graded mine.zip:my work/attempt 1.ipynb" in results["output"]


def test_one_fix_and_a_missing_and_an_unreadable_notebook(autograder_zip, tmp_path):
    nb = submission_notebook("fix_write_only", _release(LEVEL2))
    results = run_autograder(autograder_zip, tmp_path, {
        "lesson2.ipynb": json.dumps(nb).encode(),
        f"{LEVEL1}.ipynb": b"def save_checkpoint(state):\n    pass\n"})
    _assert_same_as_grade_submission_for(results, {LEVEL2: nb})
    notebook_tests = {t["tags"][0]: t for t in results["tests"] if "notebook" in t["tags"]}
    others = [e for e in _exercises(autograder_zip) if e not in (LEVEL1, LEVEL2)]
    assert set(notebook_tests) == {LEVEL1, *others}
    unreadable, missing = notebook_tests[LEVEL1], notebook_tests[others[0]]
    assert unreadable["status"] == missing["status"] == "failed"
    assert f"{LEVEL1}.ipynb could not be read: it is not a notebook: it is not JSON" \
        in unreadable["output"]
    assert "no notebook of this exercise was found" in missing["output"]
    assert f"Upload your {others[0]}.ipynb" in missing["output"]
    for check_id in ("l1_missing_fields", "l3_file_synced"):
        assert _by_check(results)[check_id]["score"] == 0
    assert _score(results) == 3 + 2  # the two atomic-save checks of Level 2
    _assert_written_marked_by_hand(results)


def _assert_same_as_grade_submission_for(results: dict, notebooks: dict[str, dict]) -> None:
    tests = _by_check(results)
    for exercise, nb in notebooks.items():
        for check_id, result in grade_submission(submission_from_notebook(nb, exercise),
                                                 exercise).items():
            assert tests[check_id]["score"] == result.points_earned, check_id
            assert tests[check_id]["status"] == ("passed" if result.passed else "failed")


def test_student_code_cannot_see_or_rewrite_the_autograder(autograder_zip, tmp_path):
    nb = _level2(_release(LEVEL2), STARTER2, FORGE)
    results = run_autograder(autograder_zip, tmp_path, {f"{LEVEL2}.ipynb":
                                                        json.dumps(nb).encode()})
    assert _score(results) == 0 and results["tests"]
    manifest = json.loads((tmp_path / "source" / MANIFEST_NAME).read_text())
    assert "exercises" in manifest


def test_gradescope_without_a_course_says_what_to_do(tmp_path):
    done = subprocess.run([sys.executable, "-m", "graders.cli", "gradescope", "--course",
                           str(tmp_path / "nowhere"), "-o", str(tmp_path / "a.zip")],
                          capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.startswith("checkpoint-lab gradescope: ")
    assert "checkpoint-lab course" in done.stderr
    assert not (tmp_path / "a.zip").exists()


def test_finding_the_notebooks_in_a_submission(tmp_path):
    from graders.gradescope.results import find_notebooks

    folder = tmp_path / "submission"
    (folder / ".ipynb_checkpoints").mkdir(parents=True)
    (folder / "a").mkdir()
    level2 = json.dumps(_release(LEVEL2))
    (folder / ".ipynb_checkpoints" / f"{LEVEL2}-checkpoint.ipynb").write_text(level2)
    (folder / "a" / "work.ipynb").write_text(level2)
    (folder / "b.ipynb").write_text(level2)
    (folder / "notes.ipynb").write_text(json.dumps({"cells": [], "metadata": {}}))
    (folder / "broken.zip").write_bytes(b"not a zip")
    (folder / "link.ipynb").symlink_to(folder / "b.ipynb")
    with zipfile.ZipFile(folder / "bundle.zip", "w") as archive:
        archive.writestr("../../evil/escape.ipynb", json.dumps(_release(LEVEL1)))
        archive.writestr(f"my work/{LEVEL1}.ipynb", json.dumps(_release(LEVEL1)))
    exercises = [{"notebook": LEVEL1, "exercise": LEVEL1, "written": []},
                 {"notebook": LEVEL2, "exercise": LEVEL2, "written": []}]
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    found = find_notebooks(folder, exercises)
    assert found.notebooks[LEVEL2][0] == "a/work.ipynb"
    assert found.notebooks[LEVEL1][0] == f"bundle.zip:my work/{LEVEL1}.ipynb"
    assert found.duplicates == ["b.ipynb"]
    assert found.others == ["notes.ipynb"]
    assert list(found.unreadable) == ["broken.zip"]
    assert "not a zip file" in found.unreadable["broken.zip"]
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before  # no writes


# -- harms of issue 16 item 17, and a split cell (item 4), through the autograder's own code ----

def _manifest() -> dict:
    from graders.gradescope.results import course_manifest

    return course_manifest(shared_course().source_dir)


def test_one_odd_grade_id_costs_nothing_else(tmp_path):
    from graders.gradescope.results import grade_folder

    odd = _release(LEVEL1)
    odd["cells"][0]["metadata"]["nbgrader"] = {"grade_id": {"an": "object"}, "solution": False}
    (tmp_path / "odd.ipynb").write_text(json.dumps(odd))
    reference = _course_notebooks(shared_course().source_dir)[LEVEL2]
    (tmp_path / "ref.ipynb").write_text(json.dumps(reference))
    results = grade_folder(tmp_path, _manifest())
    jsonschema.validate(results, SCHEMA)
    tests = _by_check(results)
    assert all(tests[c.id]["status"] == "passed" for c in checks_for(LEVEL2))
    assert {c.id for c in checks_for(LEVEL1)} <= set(tests)


def test_a_zip_of_blanks_is_read_no_further_than_a_notebook_can_start(tmp_path):
    import tracemalloc

    from graders.gradescope.results import find_notebooks

    blanks = b" " * (16 << 20)
    with zipfile.ZipFile(tmp_path / "blanks.zip", "w", zipfile.ZIP_DEFLATED) as archive:
        for index in range(40):
            archive.writestr(f"n{index}.ipynb", blanks)
    assert (tmp_path / "blanks.zip").stat().st_size < 2 << 20
    before = sorted(tmp_path.rglob("*"))
    tracemalloc.start()
    try:
        found = find_notebooks(tmp_path, [{"notebook": LEVEL2, "exercise": LEVEL2,
                                           "written": []}])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert sorted(tmp_path.rglob("*")) == before
    assert peak < 4 << 20, f"reading 40 members of blanks took {peak >> 20} MiB"
    assert len(found.unreadable) == 40 and not found.notebooks
    assert all("blanks" in why for why in found.unreadable.values())


def test_hidden_checks_are_not_told_before_the_grades_are_published(tmp_path):
    from graders.gradescope.results import grade_folder

    starter = _course_notebooks(shared_course().release_dir)[LEVEL2]
    fixed = submission_notebook("fix_write_only", starter)
    (tmp_path / "mine.ipynb").write_text(json.dumps(fixed))
    results = grade_folder(tmp_path, _manifest())
    jsonschema.validate(results, SCHEMA)
    assert "score" not in results
    visible = [c for c in checks_for(LEVEL2) if not c.hidden]
    hidden = [c for c in checks_for(LEVEL2) if c.hidden]
    earned = sum(_by_check(results)[c.id]["score"] for c in visible)
    assert results["output"].startswith(f"Visible checks: {earned:g}/")
    assert all(_by_check(results)[c.id]["visibility"] == "after_published" for c in hidden)
    assert _by_check(results)[hidden[0].id]["score"] > 0  # what the output must not tell
    total = sum(t["score"] for t in results["tests"])
    assert f"{total:g}/" not in results["output"]


def test_a_notebook_split_by_split_cell_scores_as_one(tmp_path):
    from graders.gradescope.results import grade_folder

    reference = _course_notebooks(shared_course().source_dir)[LEVEL2]
    split = split_cell(reference, "l2_save_checkpoint", "def save_checkpoint(")
    (tmp_path / "split.ipynb").write_text(json.dumps(split))
    results = grade_folder(tmp_path, _manifest())
    assert all(_by_check(results)[c.id]["status"] == "passed" for c in checks_for(LEVEL2))
    assert "l2_save_checkpoint was in 2 cells" in results["output"]
