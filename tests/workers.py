"""The suite in several processes at once (a pytest plugin, registered in ``tests/conftest.py``).

``python3 course.py test`` runs the whole suite and ``--slow`` in one pytest-xdist worker per core
(``-n 2 --dist loadgroup``; ``--workers 1`` for one process). Tests go to whichever worker is
free, one by one, except those that carry an ``xdist_group`` mark: a group runs in one worker,
its tests one after another. This plugin gives the marks:

- a test that uses a module-scoped (or class- or session-scoped) fixture of its own module runs
  with the rest of its module, so that fixture (a hub, a graded batch, a built course) is made
  once, not once per worker;
- the modules of :data:`TOGETHER` share one group: what they use cannot be used by two processes
  at once (see each entry);
- a test that uses one of :data:`SHARED_FIXTURES` runs with the others that use it;
- the tests marked ``browser`` run in one group: two JupyterLabs and two Chromiums at once on two
  cores made clicks time out (a lock button never enabled, Validate's dialog after 90 s).

A session fixture that every worker needs and that costs a minute (``dev check``'s gradings,
``tests/graded.py``) is computed once for the whole run by :func:`once_per_run`: the first worker
to ask computes it, under a lock, and leaves its result in a file the others read.
"""

from __future__ import annotations

import fcntl
import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

__all__ = ["TOGETHER", "SHARED_FIXTURES", "group_of", "once_per_run", "worker"]

#: Group name -> the modules whose tests run in that one group, and why.
TOGETHER: dict[str, tuple[str, ...]] = {
    # Grading in the uid tier closes the checkout's solutions/ to other users while it grades,
    # and each catalog batch puts the mode it found back when it ends: a second uid-tier batch
    # running then would find it open (or leave it closed), and the pod tests read
    # solutions/ as uid 1000.
    "uid-tier": ("tests/test_grading_tiers.py", "tests/test_uid_tier_harms.py",
                 "tests/test_grading_needs_a_sandbox.py"),
}

#: Session fixture -> group: a minute's setup (an environment installed as Binder installs it)
#: that the tests using it share.
SHARED_FIXTURES: dict[str, str] = {
    "plain_lab": "plain-lab",
}

_WIDE = ("module", "class", "package", "session")


def worker() -> str | None:
    """This process's pytest-xdist worker id (``gw0``, ``gw1``, ...), or None when alone."""
    return os.environ.get("PYTEST_XDIST_WORKER")


def group_of(item) -> str | None:
    """The ``xdist_group`` this plugin gives ``item`` (see the module's docstring), or None."""
    path = item.nodeid.split("::", 1)[0]
    if item.get_closest_marker("browser") is not None:
        return "browser"
    for name, modules in TOGETHER.items():
        if path in modules:
            return name
    info = getattr(item, "_fixtureinfo", None)
    defs = info.name2fixturedefs if info is not None else {}
    for fixture, group in SHARED_FIXTURES.items():
        if fixture in defs:
            return group
    for fixturedefs in defs.values():
        own = fixturedefs[-1]
        if own.scope in _WIDE and (own.baseid or "").split("::", 1)[0] == path:
            return path
    return None


def pytest_configure(config):
    if worker() is not None:
        # A worker is given COLUMNS=80; the tables the tests read are as wide as the terminal
        # (at most 110), and the tests were written for a run without one (100 columns).
        os.environ["COLUMNS"] = "100"


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the marks (its hook is plain)
def pytest_collection_modifyitems(config, items):
    if not getattr(config.option, "numprocesses", None) and worker() is None:
        return
    for item in items:
        if item.get_closest_marker("xdist_group") is None:
            group = group_of(item)
            if group is not None:
                item.add_marker(pytest.mark.xdist_group(group))


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist sends the ids to the scheduler
def pytest_collection_finish(session):
    """Each grouped test's id ends ``@group``, which is what ``--dist loadgroup`` schedules by.
    pytest-xdist 3.8 writes it into ``item._nodeid``, which pytest 9.2 no longer reads (its ids
    are structured: pytest-dev/pytest-xdist#1386), so every group would be spread over the
    workers without a word; here the id itself is given the suffix."""
    if not getattr(session.config.option, "loadgroup", False):
        return
    for item in session.items:
        names = sorted({str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
                        for mark in item.iter_markers("xdist_group")})
        nodeid = item.nodeid
        if not names or nodeid.rfind("@") > nodeid.rfind("]"):
            continue  # no group, or pytest-xdist gave it already
        grouped = f"{nodeid}@{'_'.join(names)}"
        if hasattr(item, "_id"):
            from _pytest.nodeid import coerce_node_id

            item._id = coerce_node_id(grouped)
        else:
            item._nodeid = grouped


def once_per_run(tmp_path_factory, name: str, compute: Callable[[Path], dict]) -> dict:
    """``compute(scratch)`` once in this run, whichever worker asks first; a JSON-able dict.

    The first worker to ask takes a lock in the run's base temporary folder (shared by its
    workers), computes, and writes the result beside the lock; the others wait on the lock and
    read the result. Alone (no xdist), it just computes. A compute that raises (a skip, a
    failure) leaves no result: the next worker to ask tries again, and sees the same.
    """
    base = tmp_path_factory.getbasetemp()
    if worker() is None:
        return compute(tmp_path_factory.mktemp(name))
    shared = base.parent  # the run's folder: each worker's base is popen-gwN inside it
    result = shared / f"{name}.json"
    with open(shared / f"{name}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if result.exists():
            return json.loads(result.read_text(encoding="utf-8"))
        value = compute(Path(tempfile.mkdtemp(prefix=f"{name}-", dir=shared)))
        part = shared / f"{name}.json.part"
        part.write_text(json.dumps(value), encoding="utf-8")
        part.replace(result)
        return value
