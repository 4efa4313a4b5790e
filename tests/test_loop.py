"""graders.loop: the lesson's loop is the grader's own code, and grading needs no other file.

The grader joins a student's save with the lesson's loop (Levels 1 and 3) and gives Level 4 the
reference save; both come from :mod:`graders.loop.lesson_loop`, never from ``solutions/``. So
the copy must be the reference the students read, and the packages alone (what a wheel installs:
``graders`` and ``fake_llm`` with their data, nothing else of the repository) must grade.
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys

import pytest

from graders.loop import lesson_loop
from tests.conftest import ROOT

REFERENCE = ROOT / "solutions" / "02_two_latent_failures.py"


def _definitions(text: str) -> dict[str, str]:
    tree = ast.parse(text)
    found = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            found[node.name] = ast.dump(node)
        elif isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            found[node.targets[0].id] = ast.dump(node.value)
    return found


@pytest.mark.parametrize("name", ["CHECKPOINT", "save_checkpoint", "run_agent"])
def test_the_grader_s_loop_is_the_reference_the_students_read(name):
    ours = _definitions((ROOT / "graders" / "loop" / "lesson_loop.py").read_text())
    theirs = _definitions(REFERENCE.read_text())
    assert ours[name] == theirs[name], (
        f"{name} in graders/loop/lesson_loop.py differs from {REFERENCE.relative_to(ROOT)}: "
        "copy the reference's code over (docstring and comments too)")


def test_the_loop_s_source_runs_on_its_own():
    namespace: dict = {}
    exec(compile(lesson_loop.source("CHECKPOINT", "save_checkpoint", "run_agent"), "loop",
                 "exec"), namespace)
    assert namespace["CHECKPOINT"] == "checkpoint.json" and callable(namespace["run_agent"])


_GRADE = """
import json, sys
import graders
from graders.checks import grade_submission
cells = json.loads(sys.stdin.read())
out = {"graders": graders.__file__}
for notebook, source in cells.items():
    out[notebook] = {k: [r.passed, r.message[:300]]
                     for k, r in grade_submission(source, notebook).items()}
print(json.dumps(out))
"""


@pytest.mark.sandbox
@pytest.mark.usefixtures("sandbox_here")
def test_the_packages_alone_grade_every_level_with_no_other_file_of_the_repository(tmp_path):
    site = tmp_path / "site"
    for package in ("graders", "fake_llm"):
        shutil.copytree(ROOT / package, site / package,
                        ignore=shutil.ignore_patterns("__pycache__"))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    solutions = ROOT / "solutions"
    cells = {
        "01_incomplete_checkpoint": (solutions / "01_incomplete_checkpoint.py").read_text(),
        "02_two_latent_failures": REFERENCE.read_text(),
        "03_power_cut": "# --- answer cell l3_save_checkpoint ---\n"
                        + (solutions / "03_power_cut.py").read_text(),
        "04_parallel_tool_calls": "# --- answer cell l4_run_agent ---\n"
                                  + (solutions / "04_parallel_tool_calls.py").read_text(),
    }
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["PYTHONPATH"] = str(site)
    done = subprocess.run([sys.executable, "-c", _GRADE], input=json.dumps(cells), text=True,
                          capture_output=True, cwd=elsewhere, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.splitlines()[-1])
    assert out.pop("graders").startswith(str(site)), "the copy graded, not the checkout"
    failed = {c: m for results in out.values() for c, (ok, m) in results.items() if not ok}
    assert not failed, failed
    assert sum(len(r) for r in out.values()) == 16
