"""The adversarial catalog: what it holds, and every exercise's fixtures graded as named.

``tests/fixtures/02_two_latent_failures/adversarial/`` holds submissions written to get a grade
they do not deserve (``cheat_*``), plausible wrong fixes (``fails_*``) and unusual correct fixes
(``passes_*``); each file's docstring says what it does and why it must get what
``expected.json`` says, check by check, for the four Level 2 checks.

They are graded here by ``checkpoint-lab dev check`` (which also checks each exercise's release,
reference, starter and fixtures both ways; CI runs it through this test), and once more through
nbgrader in one batch by ``tests/test_adversarial_batch.py``. Some cheats attack the machine that
grades them (``os.kill(-1, SIGKILL)``, a fork bomb, killing the grader's process group). A grader
without a sandbox would let them reach every process of the user running the tests, so dev check
runs as process 1 of a PID namespace of its own (``unshare``): whatever the grader lets through
can reach nothing outside it, and every process left behind dies with it. The grader still has to
contain each submission itself: a grading process killed by its submission, or a wrong verdict,
fails the test.
"""
from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import (  # noqa: F401 - re-exported: the catalog's helpers live in conftest
    CATALOG,
    CHECK_IDS,
    EXPECTED,
    LEVEL2,
    contained,
    grading_env,
    require_tools,
    tools_problem,
)

pytestmark = pytest.mark.sandbox

__all__ = ["CATALOG", "EXPECTED", "CHECK_IDS", "LEVEL2", "tools_problem", "require_tools",
           "contained", "grading_env"]

@pytest.fixture(scope="module", autouse=True)
def _tools():
    require_tools()


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


@pytest.mark.timeout(1200)
def test_dev_check_grades_every_exercise_and_every_fixture_as_named(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    proc = subprocess.run([*contained(), sys.executable, "-m", "graders.cli", "dev", "check"],
                          cwd=tmp_path, env=grading_env(home), capture_output=True, text=True,
                          timeout=1100, start_new_session=True)
    said = proc.stdout + proc.stderr[-3000:]
    lines = [line for line in proc.stdout.splitlines() if not line.startswith("  ")]
    assert proc.returncode == 0, said
    assert [line.split(":")[0] for line in lines] == [
        "01_incomplete_checkpoint", "02_two_latent_failures", "03_power_cut",
        "04_parallel_tool_calls"], said
    assert all(": ok (release in sync;" in line for line in lines), said
    catalog = [line for line in lines if line.startswith(LEVEL2)][0]
    count = len(EXPECTED) + len(list(CATALOG.parent.glob("*.py")))
    assert f" {count}/{count} fixtures as named" in catalog, catalog
