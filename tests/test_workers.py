"""The suite in several processes (``tests/workers.py``, ``course.py test --workers``): a session's
minute-long fixture computed once for every worker, a module's own fixtures made once, the
modules that cannot share a machine kept in one process; and which runs ``course.py`` makes
parallel. The suites here are small ones run by a real pytest-xdist in a temporary folder."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.workers import TOGETHER

pytest.importorskip("xdist", reason="pytest-xdist is not installed (python3 course.py test "
                                    "installs it from pyproject.toml)")

_CONFTEST = """
import json, os
import pytest
from tests.workers import once_per_run
pytest_plugins = ["tests.workers"]
LOG = os.environ["WORKERS_TEST_LOG"]

def _note(what):
    with open(LOG, "a") as log:
        log.write(json.dumps([what, os.environ.get("PYTEST_XDIST_WORKER")]) + "\\n")

def _compute(scratch):
    _note("computed")
    assert scratch.is_dir()
    return {"by": os.environ.get("PYTEST_XDIST_WORKER")}

@pytest.fixture(scope="session")
def shared(tmp_path_factory):
    return once_per_run(tmp_path_factory, "shared", _compute)

@pytest.fixture
def note(request):
    _note(request.node.name)
"""

_PLAIN = """
import os, shutil
import pytest
@pytest.mark.parametrize("n", range(8))
def test_plain(n, shared, note):
    assert shared["by"] in ("gw0", "gw1")
    assert shutil.get_terminal_size().columns == 100  # as wide as one process without a tty
"""

_OWN_FIXTURE = """
import pytest
from conftest import _note
@pytest.fixture(scope="module")
def made():
    _note("module fixture made")
    return 1
@pytest.mark.parametrize("n", range(6))
def test_with_module_fixture(n, made, shared, note):
    assert made == 1
"""

_MARKED = """
import pytest
@pytest.mark.xdist_group("kept-together")
@pytest.mark.parametrize("n", range(3))
def test_marked(n, shared, note):
    pass
"""


def _run_small_suite(tmp_path: Path) -> list[list]:
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "conftest.py").write_text(_CONFTEST)
    (suite / "test_plain.py").write_text(_PLAIN)
    (suite / "test_own_fixture.py").write_text(_OWN_FIXTURE)
    (suite / "test_marked.py").write_text(_MARKED)
    log = tmp_path / "log.jsonl"
    env = dict(os.environ, WORKERS_TEST_LOG=str(log), PYTHONPATH=str(ROOT))
    env.pop("PYTEST_XDIST_WORKER", None)  # this suite's own run may itself be a worker
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "-n", "2", "--dist", "loadgroup", "--rootdir", str(suite),
                           "--basetemp", str(tmp_path / "base"), str(suite)],
                          cwd=suite, env=env, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "17 passed" in done.stdout, done.stdout[-2000:]
    return [json.loads(line) for line in log.read_text().splitlines()]


def test_a_session_fixture_is_computed_once_for_every_worker_and_groups_stay_in_one(tmp_path):
    noted = _run_small_suite(tmp_path)
    computed = [who for what, who in noted if what == "computed"]
    assert len(computed) == 1, noted
    # every test asks for the session fixture: both workers asked, one computed it
    ran = {who for what, who in noted if what.startswith("test_")}
    assert ran == {"gw0", "gw1"}, f"both workers should run tests: {noted}"
    made = [who for what, who in noted if what == "module fixture made"]
    assert len(made) == 1, f"a module's own fixture is made once: {noted}"
    own = {who for what, who in noted if what.startswith("test_with_module_fixture")}
    assert own == set(made), f"a module with its own fixture runs in one worker: {noted}"
    marked = {who for what, who in noted if what.startswith("test_marked")}
    assert len(marked) == 1, f"tests marked with one xdist_group run in one worker: {noted}"


def test_the_modules_kept_together_exist_and_are_marked_for_the_slow_tier():
    for modules in TOGETHER.values():
        for module in modules:
            path = ROOT / module
            assert path.is_file(), f"tests/workers.py names {module}, which is gone"
            assert "pytest.mark.sandbox" in path.read_text(encoding="utf-8"), module


# -- course.py test: how many processes ---------------------------------------------------------

def _course_py():
    spec = importlib.util.spec_from_file_location("course_under_test", ROOT / "course.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def course(monkeypatch):
    module = _course_py()
    monkeypatch.setattr(module, "_has_xdist", lambda: True)
    monkeypatch.setattr(module.os, "cpu_count", lambda: 2)
    return module


def test_the_suite_runs_in_one_process_by_default_and_in_two_when_asked(course):
    parallel = ["-n", "2", "--dist", "loadgroup"]
    assert course.test_command([]) == [], "one process by default (course.py's MAX_WORKERS)"
    assert course.test_command(["--slow", "-q"]) == ["--slow", "-q"]
    assert course.test_command(["--workers", "2"]) == parallel
    assert course.test_command(["--slow", "--workers", "2", "-q"]) == [*parallel, "--slow", "-q"]
    assert course.test_command(["-m", "not browser", "--workers", "2"]) == [
        *parallel, "-m", "not browser"]


def test_one_process_for_the_fast_tier_named_tests_or_when_asked(course):
    assert course.test_command(["--fast"]) == ["--fast"]
    assert course.test_command(["tests/test_harness.py"]) == ["tests/test_harness.py"]
    assert course.test_command(["tests/test_x.py::test_y"]) == ["tests/test_x.py::test_y"]
    assert course.test_command(["--workers", "1", "--slow"]) == ["--slow"]
    assert course.test_command(["--fast", "--workers", "2"])[:4] == ["-n", "2", "--dist",
                                                                    "loadgroup"]
    assert course.test_command(["-n", "3"]) == ["-n", "3"], "pytest-xdist's own option wins"


def test_one_process_on_one_core_or_without_xdist(course, monkeypatch):
    monkeypatch.setattr(course.os, "cpu_count", lambda: 1)
    assert course.test_command(["--slow"]) == ["--slow"]
    monkeypatch.setattr(course.os, "cpu_count", lambda: 8)
    assert course.test_command(["--slow"]) == ["--slow"], "one by default, however many cores"
    monkeypatch.setattr(course, "_has_xdist", lambda: False)
    assert course.test_command(["--slow", "--workers", "2"]) == ["--slow"]


@pytest.mark.parametrize("value", ["0", "two", ""])
def test_a_bad_worker_count_is_refused_saying_what_to_give(course, value):
    args = ["--workers", value] if value else ["--workers"]
    with pytest.raises(SystemExit) as refused:
        course.test_command(args)
    said = str(refused.value)
    assert "--workers needs a number of test processes" in said and "--workers 1" in said
