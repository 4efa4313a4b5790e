"""The suite's two speeds (a pytest plugin, registered in ``tests/conftest.py``).

``--fast`` runs every test that needs no sandbox, no nbgrader, no Jupyter server, no browser and
builds no environment: the tests without a slow mark (``SLOW_MARKS``). ``--slow`` runs the
others. With neither, every test runs (README's ``python3 course.py test``).

During ``--fast`` a watch keeps the fast tier fast: a test (or a fixture it uses) that starts one
of the ``WATCHED`` programs, itself or through a program it starts, fails with a message naming
the program and the mark to give the test. The watch sees the programs this process starts
(``subprocess.Popen``) and, through stand-ins put first on ``PATH``, the ones its children find on
``PATH``; each records what ran, with the test that ran it, then runs the real program.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

#: A test with one of these marks runs in the slow tier only.
SLOW_MARKS = ("sandbox", "nbgrader", "browser", "install")

#: What each watched program means, and the mark a test that starts it needs.
WATCHED = {
    "bwrap": ("the bubblewrap sandbox", "sandbox"),
    "strace": ("strace", "sandbox"),
    "nbgrader": ("nbgrader", "nbgrader"),
    "jupyter": ("a Jupyter command", "nbgrader or browser"),
    "jupyter-lab": ("JupyterLab", "browser"),  # also `checkpoint-lab lab`
    "jupyter-server": ("a Jupyter server", "browser"),
    "jupyterhub": ("JupyterHub", "browser"),
    "chromium": ("Chromium", "browser"),
    "chromium-browser": ("Chromium", "browser"),
    "chrome": ("Chrome", "browser"),
    "headless_shell": ("Chromium", "browser"),
}

#: Python modules that, run with ``python -m``, start the same things.
WATCHED_MODULES = {
    "nbgrader": "nbgrader",
    "jupyter": "jupyter",
    "jupyterlab": "jupyter-lab",
    "jupyter_server": "jupyter-server",
    "jupyterhub": "jupyterhub",
}

_PREFIX = "checkpoint-lab-fast-watch-"

_SHIM = """#!/bin/sh
printf '%s\\t%s\\n' "${PYTEST_CURRENT_TEST:-?}" "NAME $*" >> LOG
exec REAL "$@"
"""


def pytest_addoption(parser):
    group = parser.getgroup("speeds", "the suite's two speeds")
    group.addoption("--fast", action="store_true",
                    help="run only the tests that need no sandbox, nbgrader, Jupyter server, "
                         f"browser or new environment (none of the marks {', '.join(SLOW_MARKS)})")
    group.addoption("--slow", action="store_true",
                    help=f"run only the tests marked {', '.join(SLOW_MARKS)}")


def pytest_configure(config):
    if config.getoption("fast") and config.getoption("slow"):
        raise pytest.UsageError("--fast and --slow each choose half of the suite; give one of "
                                "them, or neither to run every test.")
    if config.getoption("fast"):
        config.pluginmanager.register(FastWatch(), "checkpoint-lab-fast-watch")


def _slow(item) -> bool:
    return any(item.get_closest_marker(mark) is not None for mark in SLOW_MARKS)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    fast, slow = config.getoption("fast"), config.getoption("slow")
    if not (fast or slow):
        return
    kept = [item for item in items if _slow(item) == slow]
    if len(kept) != len(items):
        config.hook.pytest_deselected(items=[item for item in items if _slow(item) != slow])
        items[:] = kept


def _probe(args: list[str]) -> bool:
    """Whether ``args`` only asks if bubblewrap or strace can start here (``graders.sandbox``'s
    probe runs ``true`` in it, once per process): that is not a run of either."""
    return os.path.basename(args[0]) in ("bwrap", "strace") and args[-1] == "true"


def watched(argv) -> str | None:
    """The ``WATCHED`` program ``argv`` starts, if any (also through ``python -m``)."""
    if isinstance(argv, str):  # a command line (shell=True) or one program's path
        argv = shlex.split(argv) if " " in argv else [argv]
    elif isinstance(argv, (bytes, os.PathLike)):
        argv = [argv]
    args = [os.fsdecode(a) for a in argv]
    if not args:
        return None
    name = os.path.basename(args[0])
    if _probe(args):
        return None
    if name in WATCHED:
        return name
    if name == "checkpoint-lab" and args[1:2] == ["lab"]:
        return "jupyter-lab"
    if name in ("sh", "bash") and "-c" in args[:-1]:
        words = shlex.split(args[args.index("-c") + 1])
        words = words[1:] if words[:1] == ["exec"] else words
        return watched(words) if words else None
    if name.startswith("python") and "-m" in args[:-1]:
        module = args[args.index("-m") + 1:]
        if module[:2] == ["graders.cli", "lab"]:
            return "jupyter-lab"
        return WATCHED_MODULES.get(module[0].split(".")[0])
    return None


class FastWatch:
    """Fails a fast-tier test that starts a ``WATCHED`` program (see the module's docstring)."""

    def __init__(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix=_PREFIX))
        self.log = self.folder / "started.tsv"
        self.log.touch()
        self.seen = 0
        self.at_collection: list[str] = []
        self.shims = self.folder / "bin"
        self.shims.mkdir()
        # an outer fast tier's stand-ins (a test of this watch runs pytest in pytest) are skipped
        path = os.pathsep.join(folder for folder in os.environ.get("PATH", "").split(os.pathsep)
                               if _PREFIX not in folder)
        for name in WATCHED:
            real = shutil.which(name, path=path)
            if real is None:
                continue
            shim = self.shims / name
            shim.write_text(_SHIM.replace("NAME", name).replace("LOG", shlex.quote(
                str(self.log))).replace("REAL", shlex.quote(real)))
            shim.chmod(0o755)
        self.saved_path = os.environ.get("PATH", "")
        os.environ["PATH"] = f"{self.shims}{os.pathsep}{self.saved_path}"
        self.popen_init = subprocess.Popen.__init__
        watch, original = self, subprocess.Popen.__init__

        def init(popen, args, *rest, **kwargs):
            seen = isinstance(args, (list, tuple, str, bytes, os.PathLike))  # not an iterator
            name = watched(args) if seen else None
            if name is not None and not watch.is_shim(args):
                watch.record(name, args)
            original(popen, args, *rest, **kwargs)

        subprocess.Popen.__init__ = init

    def is_shim(self, argv) -> bool:
        """Whether ``argv`` runs one of the stand-ins (which record it themselves)."""
        first = argv if isinstance(argv, (str, bytes, os.PathLike)) else next(iter(argv), "")
        return os.path.dirname(os.fsdecode(first)) == str(self.shims)

    def record(self, name: str, argv) -> None:
        line = argv if isinstance(argv, str) else " ".join(os.fsdecode(a) for a in argv)
        with self.log.open("a") as log:
            log.write(f"{os.environ.get('PYTEST_CURRENT_TEST', '?')}\t{name} {line}\n")

    def started(self) -> list[str]:
        lines = self.log.read_text().splitlines()
        new, self.seen = lines[self.seen:], len(lines)
        ran = [line.split("\t", 1)[-1] for line in new]
        return [line for line in ran if not _probe(line.split())]

    def pytest_collection_finish(self, session):
        self.at_collection = self.started()  # the test modules' imports, not a test

    def pytest_terminal_summary(self, terminalreporter):
        if self.at_collection:
            terminalreporter.write_line(
                "fast tier: collecting the tests started "
                + "; ".join(line[:200] for line in self.at_collection[:3]), yellow=True)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        report = outcome.get_result()
        started = self.started()
        if not started or report.outcome == "skipped":
            return
        programs = sorted({line.split()[0] for line in started})
        needs = sorted({WATCHED[name][1] for name in programs})
        what = ", ".join(WATCHED[name][0] for name in programs)
        shown = "\n".join(f"  {line[:300]}" for line in started[:5])
        more = f"\n  ... and {len(started) - 5} more" if len(started) > 5 else ""
        report.outcome = "failed"
        report.longrepr = (
            f"{item.nodeid} started {what} during its {call.when} in the fast tier "
            f"(`--fast`), which runs only tests that need none:\n{shown}{more}\n"
            f"Mark it for the slow tier: @pytest.mark.{' / '.join(needs)} on the test (or "
            "`pytestmark` on its module), or keep the test from starting it.")

    def pytest_unconfigure(self, config):
        subprocess.Popen.__init__ = self.popen_init
        os.environ["PATH"] = self.saved_path
        shutil.rmtree(self.folder, ignore_errors=True)


__all__ = ["SLOW_MARKS", "WATCHED", "FastWatch", "watched"]
