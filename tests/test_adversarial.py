"""The adversarial catalog, graded one submission at a time with ``grade_submission``.

``tests/fixtures/02_two_latent_failures/adversarial/`` holds submissions written to get a grade
they do not deserve
(``cheat_*``), plausible wrong fixes (``fails_*``) and unusual correct fixes (``passes_*``); each
file's docstring says what it does and why it must get what ``expected.json`` says, check by
check, for the four Level 2 checks.

Some cheats attack the machine that grades them (``os.kill(-1, SIGKILL)``, a fork bomb, killing
the grader's process group). A grader without a sandbox would let them reach every process of the
user running the tests, so each submission is graded by a fresh Python that is process 1 of a PID
namespace of its own (``unshare``): whatever the grader lets through can reach nothing outside it,
and every process left behind dies with it. The grader still has to contain the submission itself:
a grading process killed by its submission, or a wrong verdict, fails the test.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import IN_CI, ROOT

pytestmark = pytest.mark.sandbox

__all__ = ["CATALOG", "EXPECTED", "CHECK_IDS", "LEVEL2", "tools_problem", "require_tools",
           "contained", "grading_env"]

CATALOG = ROOT / "tests" / "fixtures" / "02_two_latent_failures" / "adversarial"
EXPECTED: dict[str, dict[str, bool]] = json.loads((CATALOG / "expected.json").read_text())
CHECK_IDS = ("l2_atomic_save", "l2_save_point_a", "l2_atomic_save_hidden",
             "l2_save_point_a_hidden")
LEVEL2 = "02_two_latent_failures"

#: Grades one file in the contained process: argv = source path, result path.
_GRADE = """
import json, sys
from graders.checks import grade_submission
results = grade_submission(open(sys.argv[1], encoding="utf-8").read(), sys.argv[3])
with open(sys.argv[2], "w") as f:
    json.dump({k: {"passed": bool(r.passed), "points": r.points_earned, "message": r.message}
               for k, r in results.items()}, f)
"""


def tools_problem() -> str | None:
    """Why these tests cannot run here (one line), or None."""
    if not sys.platform.startswith("linux"):
        return f"the sandbox tests need Linux (bubblewrap, strace); this is {sys.platform}"
    missing = [tool for tool in ("bwrap", "strace", "unshare") if shutil.which(tool) is None]
    if missing:
        return (f"the sandbox tests need {' and '.join(missing)} "
                "(Debian: apt-get install bubblewrap strace util-linux)")
    probe = subprocess.run([*contained(), sys.executable, "-c", "pass"], capture_output=True,
                           text=True, timeout=60)
    if probe.returncode != 0:
        return f"cannot make a PID namespace to contain the catalog: {probe.stderr.strip()[:200]}"
    return None


def require_tools() -> None:
    """Skip with a one-line reason when the tools are missing; fail instead when CI=true."""
    problem = tools_problem()
    if problem:
        if IN_CI:
            pytest.fail(f"CI must run the sandbox tests: {problem}")
        pytest.skip(problem)


def contained() -> list[str]:
    """The command prefix that runs a program as process 1 of a new PID namespace.

    Process 1 of a namespace ignores SIGKILL sent from inside it, so ``kill(-1, SIGKILL)`` there
    ends everything but the grader; when process 1 ends, every process of the namespace ends.
    """
    prefix = ["unshare", "--pid", "--fork", "--mount-proc", "--kill-child"]
    if os.geteuid() != 0:
        prefix[1:1] = ["--user", "--map-current-user"]
    return prefix


def grading_env(home: Path) -> dict[str, str]:
    """The environment graders get here: this checkout importable, HOME a folder of the test's."""
    env = dict(os.environ, HOME=str(home), PYTHONPATH=str(ROOT),
               PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    env.pop("TMPDIR", None)
    return env


@pytest.fixture(scope="module", autouse=True)
def _tools():
    require_tools()


def _grade(path: Path, tmp_path: Path) -> tuple[dict | None, str]:
    """Grade ``path``; return (check id -> result, or None if grading died) and what it said."""
    home = tmp_path / "home"
    work = tmp_path / "cwd"
    home.mkdir()
    work.mkdir()
    out = tmp_path / "results.json"
    try:
        proc = subprocess.run(
            [*contained(), sys.executable, "-c", _GRADE, str(path), str(out), LEVEL2],
            cwd=work, env=grading_env(home), capture_output=True, timeout=600,
            start_new_session=True)
    except subprocess.TimeoutExpired:
        return None, "grading did not finish within 600 s"
    said = (proc.stderr or b"").decode(errors="replace")[-2000:]
    if not out.is_file():
        return None, f"the grading process ended with status {proc.returncode}: {said}"
    return json.loads(out.read_text()), said


def test_the_catalog_is_complete():
    files = sorted(p.stem for p in CATALOG.glob("*.py"))
    assert files == sorted(EXPECTED), "every catalog file needs an entry in expected.json"
    assert len(files) >= 45
    prefixes = ("passes_", "fails_atomic_", "fails_save_point_a_", "fails_all_", "cheat_")
    for name, expected in EXPECTED.items():
        assert name.startswith(prefixes), name
        assert set(expected) == set(CHECK_IDS), name
        text = (CATALOG / f"{name}.py").read_text()
        assert text.startswith('"""'), f"{name} starts with a docstring saying what it does"
        assert "Expected" in text.split('"""')[1], f"{name}'s docstring says what it expects"
    for name, expected in EXPECTED.items():
        if name.startswith("cheat_"):
            assert not any(expected.values()), f"{name}: a cheat on the starter gains nothing"
        elif name.startswith("passes_"):
            assert all(expected.values()), name
        elif name.startswith("fails_all_"):
            assert not any(expected.values()), name
        elif name.startswith("fails_atomic_"):
            assert not expected["l2_atomic_save"] and expected["l2_save_point_a"], name
        else:
            assert expected["l2_atomic_save"] and not expected["l2_save_point_a"], name


@pytest.mark.timeout(700)
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_graded_as_expected(name, tmp_path):
    results, said = _grade(CATALOG / f"{name}.py", tmp_path)
    assert results is not None, f"{name}: no verdicts: {said}"
    wrong = [check for check in CHECK_IDS
             if check not in results or results[check]["passed"] != EXPECTED[name][check]]
    lines = [f"{check}: expected {'pass' if EXPECTED[name][check] else 'fail'}, got "
             + (f"{'pass' if results[check]['passed'] else 'fail'} ({results[check]['points']} "
                f"points): {results[check]['message'][:600]}" if check in results else "nothing")
             for check in CHECK_IDS]
    assert not wrong, f"{name} graded wrong on {', '.join(wrong)}:\n" + "\n".join(lines)
    for check in CHECK_IDS:
        if not results[check]["passed"]:
            assert results[check]["points"] == 0, f"{name} {check}: a failed check earns nothing"
