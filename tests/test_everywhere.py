"""The self-check works wherever the course is used: ``checkpoint-lab check`` on every level's
reference and starter, in each place of issue 17's table, simulated on this Linux machine.

Each place is a recipe of bubblewrap arguments around the command (this file's own copy of
``envsim``'s): the full machine; a laptop without strace or bubblewrap (macOS-like); a JupyterHub
pod (non-root, no user namespaces); Docker's default profile or Gradescope (root without
CAP_SYS_ADMIN, no user namespaces); Windows-like (no tools and a Python without ``os.fork``).
Everywhere: every reference passes every visible check, every starter fails exactly the checks
it fails on the full machine, and no check reads FAIL (or "not checked") because a tool is
missing. The simulation needs bubblewrap and root; elsewhere the test is skipped.
"""

from __future__ import annotations

import atexit
import functools
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import jupytext
import nbformat
import pytest

from graders.checks import ANSWER_CELLS, NOTEBOOKS

ROOT = Path(__file__).resolve().parents[1]
COMMAND = Path(sys.executable).with_name("checkpoint-lab")
BWRAP = shutil.which("bwrap")
STRACE = shutil.which("strace") or "/usr/bin/strace"

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(not (sys.platform.startswith("linux") and BWRAP and os.geteuid() == 0),
                       reason="simulating other machines needs Linux, bubblewrap and root"),
]

_MASK = ["--ro-bind", "/dev/null", STRACE, "--ro-bind", "/dev/null", BWRAP or "/usr/bin/bwrap"]
_NO_FORK = ('import os\nfor _n in ("fork", "forkpty", "register_at_fork"):\n'
            '    if hasattr(os, _n):\n        delattr(os, _n)\n')

#: place -> (its bubblewrap arguments, the observer its self-check must name in one line)
PLACES = {
    "full": (None, None),
    "no-tools": (["--dev-bind", "/", "/", *_MASK], "no strace"),
    "pod": (["--dev-bind", "/", "/", "--unshare-user", "--disable-userns", "--uid", "1000",
             "--gid", "1000"], "strace watched"),
    "docker-root": (["--dev-bind", "/", "/", "--unshare-user", "--disable-userns", "--uid", "0",
                     "--gid", "0", "--cap-drop", "CAP_SYS_ADMIN"], None),
    "no-fork": (["--dev-bind", "/", "/", *_MASK], "no strace"),
}
_ROW = re.compile(r"^(l\d_[a-z_]+)\s+(PASS|FAIL|not checked here)", re.M)
#: Words of a check that could not run because of the machine, not the code.
_MISSING_TOOL = ("on this machine", "bubblewrap", "install", "needs Linux", "not checked here",
                 "fault in the grader")


@functools.cache
def _scratch() -> Path:
    """A world-writable folder with each notebook, starter and reference (the pod's uid 1000
    must read them and may write beside them)."""
    import tempfile

    from graders.nbgrader_plumbing.build import extract_code

    folder = Path(tempfile.mkdtemp(prefix="checkpoint-lab-everywhere-"))
    atexit.register(shutil.rmtree, folder, True)
    (folder / "starter").mkdir()
    (folder / "reference").mkdir()
    (folder / "no-fork").mkdir()
    (folder / "no-fork" / "sitecustomize.py").write_text(_NO_FORK)
    for name in NOTEBOOKS:
        released = ROOT / "exercises" / f"{name}.ipynb"
        shutil.copy(released, folder / "starter" / released.name)
        authored = jupytext.read(ROOT / "exercises" / "src" / f"{name}.py", fmt="py:percent")
        specs = {c.metadata["nbgrader"]["grade_id"]:
                 c.metadata["checkpoint_lab"]["solution_from"] for c in authored.cells
                 if "solution_from" in c.metadata.get("checkpoint_lab", {})}
        nb = nbformat.read(released, as_version=4)
        for cell in nb.cells:
            grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
            if grade_id in ANSWER_CELLS[name]:
                cell.source = extract_code(specs[grade_id])
        nbformat.write(nb, folder / "reference" / released.name)
    for path in [folder, *folder.rglob("*")]:
        path.chmod(0o777 if path.is_dir() else 0o666)
    return folder


@functools.cache
def check(place: str, kind: str, name: str) -> tuple[int, dict[str, str], str]:
    """``checkpoint-lab check`` of ``kind``'s notebook ``name`` in ``place``: (exit status,
    check id -> PASS/FAIL/not checked here, the output)."""
    wrapper, _ = PLACES[place]
    notebook = _scratch() / kind / f"{name}.ipynb"
    command = [str(COMMAND), "check", str(notebook)]
    env = {k: v for k, v in os.environ.items() if not k.startswith("CHECKPOINT_LAB_")}
    if wrapper is not None:
        extra = []
        if place == "no-fork":
            extra = ["--setenv", "PYTHONPATH", str(_scratch() / "no-fork")]
        command = [BWRAP, *wrapper, *extra, "--", *command]
    proc = subprocess.run(command, capture_output=True, text=True, cwd=_scratch(), env=env,
                          timeout=600)
    output = proc.stdout + proc.stderr
    return proc.returncode, dict(_ROW.findall(proc.stdout)), output


def visible(name: str) -> set[str]:
    from graders.checks import checks_for

    return {c.shown_id for c in checks_for(name, include_hidden=False)}


def test_the_no_fork_recipe_really_has_no_fork():
    proc = subprocess.run([BWRAP, *PLACES["no-fork"][0], "--setenv", "PYTHONPATH",
                           str(_scratch() / "no-fork"), "--", sys.executable, "-c",
                           "import os, shutil; print(hasattr(os, 'fork'), shutil.which('strace'))"],
                          capture_output=True, text=True, timeout=60)
    assert proc.stdout.split() == ["False", "None"], proc.stderr


@pytest.mark.parametrize("place", PLACES)
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_the_self_check_gives_the_full_machines_verdicts_everywhere(place, name):
    status, rows, output = check(place, "reference", name)
    assert set(rows) == visible(name), output
    assert all(r == "PASS" for r in rows.values()) and status == 0, output
    status, rows, output = check(place, "starter", name)
    _, on_full, _ = check("full", "starter", name)
    assert rows == on_full and "PASS" not in rows.values(), output
    assert status == 1, output
    for line in output.splitlines():
        if line.startswith(tuple(rows)) or line.startswith(" "):
            assert not any(words in line for words in _MISSING_TOOL), line
    _, says = PLACES[place]
    if says:
        assert says in output, output
