"""Every fixture graded once per run (a pytest plugin, registered in ``tests/conftest.py``).

``checkpoint-lab dev check`` grades every exercise's reference and starter (as released) and every
fixture and catalog entry of ``tests/fixtures/`` in the bubblewrap tier. The session runs it once
(:func:`dev_check`), as process 1 of a PID namespace of its own (some cheats SIGKILL every
process they may signal), with ``--records``: the tests that need a fixture's grading in that
tier assert on those records (:func:`graded`) instead of grading it again. A test that exists to
test another path (a batch, a notebook, another observer) still grades through that path.
"""

from __future__ import annotations

import functools
import json
import subprocess
import sys
from pathlib import Path

import pytest

from graders.checks.result import CheckResult
from tests.workers import once_per_run

__all__ = ["dev_check", "graded", "DevCheck"]

ROOT = Path(__file__).resolve().parents[1]


class DevCheck:
    """One run of ``checkpoint-lab dev check --records``: what it said, and what it graded."""

    def __init__(self, returncode: int, stdout: str, stderr: str, records: dict | None,
                 path: Path | None = None):
        self.path = path  # the records file, for ``dev golden --from-records``
        self.returncode = returncode
        self.stdout = stdout
        self.stderr = stderr
        self.records = records or {"tier": None, "exercises": {}}

    def to_dict(self) -> dict:
        """What :meth:`from_dict` reads back (the run's other workers read it so)."""
        return {"returncode": self.returncode, "stdout": self.stdout, "stderr": self.stderr,
                "records": self.records, "path": str(self.path) if self.path else None}

    @classmethod
    def from_dict(cls, data: dict) -> DevCheck:
        return cls(data["returncode"], data["stdout"], data["stderr"], data["records"],
                   Path(data["path"]) if data.get("path") else None)

    @property
    def said(self) -> str:
        """What dev check said, for a failing assertion."""
        return self.stdout + self.stderr[-3000:]

    @property
    def tier(self) -> str | None:
        """The tier dev check graded in (`graders.sandbox.box.Tier.describe`)."""
        return self.records["tier"]

    def results(self, notebook: str, which: str | Path) -> dict[str, CheckResult]:
        """Check id -> result of ``which``: ``"reference"``, ``"starter"`` (as released) or a
        fixture's path (absolute, or relative to the checkout); a KeyError names what dev check
        did not grade."""
        graded = self.records["exercises"].get(notebook)
        if graded is None:
            raise KeyError(f"dev check graded no exercise {notebook!r}\n{self.said}")
        if which in ("reference", "starter"):
            found = graded[which]
        else:
            path = Path(which)
            rel = (path.resolve().relative_to(ROOT) if path.is_absolute() else path).as_posix()
            if rel not in graded["fixtures"]:
                raise KeyError(f"dev check graded no fixture {rel} of {notebook}")
            found = graded["fixtures"][rel]
        return {check: CheckResult.from_dict(data) for check, data in found.items()}


def run_dev_check(scratch: Path, wrap: tuple[str, ...] = ()) -> DevCheck:
    """``checkpoint-lab dev check --records`` (under ``wrap``, a command prefix), as process 1 of
    a PID namespace of its own, in ``scratch``."""
    from tests.conftest import contained, grading_env, require_tools

    require_tools()
    home = scratch / "home"
    home.mkdir(parents=True)
    records = scratch / "records.json"
    env = grading_env(home)
    env.pop("CHECKPOINT_LAB_OBSERVER", None)  # the sandbox's records, whatever the caller chose
    proc = subprocess.run([*contained(), *wrap, sys.executable, "-m", "graders.cli", "dev",
                           "check", "--records", str(records)],
                          cwd=scratch, env=env, capture_output=True, text=True, timeout=1400,
                          start_new_session=True)
    kept = json.loads(records.read_text()) if records.exists() else None
    return DevCheck(proc.returncode, proc.stdout, proc.stderr, kept, records)


@pytest.fixture(scope="session")
def dev_check(tmp_path_factory) -> DevCheck:
    """``checkpoint-lab dev check`` on this checkout, run once per run (once for all the
    workers of a run on several processes, ``tests/workers.py``): every exercise's reference
    and starter and every fixture, graded in the bubblewrap tier."""
    return DevCheck.from_dict(once_per_run(tmp_path_factory, "dev-check",
                                           lambda scratch: run_dev_check(scratch).to_dict()))


#: Seconds a test that asks for the session's gradings may take: whichever test asks first (in
#: a parallel run, any worker's) waits for the whole ``dev check``.
WAITS_FOR_DEV_CHECK = 1500


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    for item in items:
        if not {"graded", "dev_check"} & set(getattr(item, "fixturenames", ())):
            continue
        marked = item.get_closest_marker("timeout")
        if marked is None or (marked.args and marked.args[0] < WAITS_FOR_DEV_CHECK):
            item.add_marker(pytest.mark.timeout(WAITS_FOR_DEV_CHECK), append=False)


#: The test that runs ``dev check`` in every full run; when a run selects it, the other tests
#: take their gradings from its records.
DEV_CHECK_TEST = "test_dev_check_grades_every_exercise_and_every_fixture_as_named"


@pytest.fixture(scope="session")
def graded(request):
    """``graded(notebook, which)``: the bubblewrap tier's results of a fixture (or of the
    reference or starter as released). When this run includes ``dev check``'s test (every full
    run does), they are the records of the session's ``dev check``; a run without it (a
    developer's ``-k``) grades the one fixture asked for, as ``dev check`` grades it, rather
    than wait for every fixture of every exercise."""
    if any(item.originalname == DEV_CHECK_TEST for item in request.session.items):
        dev_check = request.getfixturevalue("dev_check")

        def results(notebook: str, which: str | Path) -> dict[str, CheckResult]:
            assert dev_check.tier and "bubblewrap tier" in dev_check.tier, dev_check.said
            try:
                return dev_check.results(notebook, which)
            except KeyError as exc:
                pytest.fail(str(exc.args[0]))
        return results

    @functools.cache  # each asked for once, whatever number of tests ask
    def alone(notebook: str, which: str | Path) -> dict[str, CheckResult]:
        from graders.checks import grade_submission
        from graders.checks.answer_cells import fixture_cells
        from graders.nbgrader_plumbing.build import release_and_reference
        from graders.sandbox import box

        chosen = box.tier()
        assert not isinstance(chosen, str) and chosen.name == "bubblewrap", chosen
        if which in ("reference", "starter"):
            starter, reference = release_and_reference(notebook)
            return grade_submission(reference if which == "reference" else starter, notebook)
        path = Path(which)
        assert not path.name.startswith("cheat_"), \
            f"{which}: a cheat is graded only in dev check's PID namespace: run its test too"
        path = path if path.is_absolute() else ROOT / path
        return grade_submission(fixture_cells(path.read_text(encoding="utf-8"), notebook),
                                notebook)
    return alone
