"""Putting a crash's leftovers back for a restart: one function (`graders.recording.leftovers`)
that the sandbox's bootstrap runs inside the sandbox and the in-process recorder imports, so the
two observers restart into the same folder (issue 31)."""

from __future__ import annotations

import ast
import base64
import json
import os
import stat
import sys

import pytest

from graders.recording.leftovers import put_back
from tests.conftest import ROOT

LEFTOVERS = ROOT / "graders" / "recording" / "leftovers.py"


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


#: A crash state of every kind the judge puts back, and entries a restart must not follow.
SEED = [
    {"path": "/work/tmp", "kind": "dir"},
    {"path": "/work/tmp/part.json", "kind": "file", "data": _b64(b'{"turns": 1')},
    {"path": "/work/checkpoint.json", "kind": "file", "data": _b64(b'{"version": 1}\n\x00\xff')},
    {"path": "/work/checkpoint.json.4711.tmp", "kind": "file", "data": _b64(b"{}"),
     "named_after_pid": 4711},
    {"path": "/work/keep.4711", "kind": "file", "data": _b64(b"")},
    {"path": "/work/latest", "kind": "symlink", "target": "checkpoint.json"},
    {"path": "/work/pipe", "kind": "fifo"},
    {"path": "/tmp/ckpt-abc.tmp", "kind": "file", "data": _b64(b"half")},
    {"path": "/work/../escaped", "kind": "file", "data": _b64(b"x")},
    {"path": "/work/tmp/../../escaped", "kind": "file", "data": _b64(b"x")},
    {"path": "/etc/escaped", "kind": "file", "data": _b64(b"x")},
    {"path": "/work/odd", "kind": "socket"},
]


def tree(folder, pid: int) -> dict:
    """Each entry below ``folder``: its kind and bytes or target (``PID`` for ``pid`` in names)."""
    found = {}
    for here, dirs, files in os.walk(folder):
        for name in sorted(dirs + files):
            path = os.path.join(here, name)
            shown = os.path.relpath(path, folder).replace(str(pid), "PID")
            mode = os.lstat(path).st_mode
            if stat.S_ISLNK(mode):
                found[shown] = ["symlink", os.readlink(path)]
            elif stat.S_ISDIR(mode):
                found[shown] = ["dir"]
            elif stat.S_ISFIFO(mode):
                found[shown] = ["fifo"]
            else:
                with open(path, "rb") as f:
                    found[shown] = ["file", f.read().hex()]
    return found


WANT_WORK = {
    "tmp": ["dir"], "tmp/part.json": ["file", b'{"turns": 1'.hex()],
    "checkpoint.json": ["file", b'{"version": 1}\n\x00\xff'.hex()],
    "checkpoint.json.PID.tmp": ["file", b"{}".hex()], "keep.4711": ["file", ""],
    "latest": ["symlink", "checkpoint.json"], "pipe": ["fifo"]}
WANT_TMP = {"ckpt-abc.tmp": ["file", b"half".hex()]}


def test_put_back_makes_each_kind_renames_the_killed_id_and_follows_no_path_out(tmp_path):
    work, tmp = tmp_path / "work", tmp_path / "tmp"
    work.mkdir()
    tmp.mkdir()
    put_back(SEED, {"/work": str(work), "/tmp": str(tmp)}, 97)
    assert tree(work, 97) == WANT_WORK
    assert tree(tmp, 97) == WANT_TMP
    assert sorted(os.listdir(tmp_path)) == ["tmp", "work"]


def test_a_leftover_named_after_this_very_id_keeps_its_name(tmp_path):
    put_back([{"path": "/work/a.4711.tmp", "kind": "file", "data": "", "named_after_pid": 4711}],
             {"/work": str(tmp_path)}, 4711)
    assert os.listdir(tmp_path) == ["a.4711.tmp"]


def test_leftovers_is_standard_library_only_as_the_bootstrap_needs():
    """The bootstrap runs the file by itself inside the sandbox (``python -I -S``): it may
    import nothing but the standard library, and no module of its own."""
    imported = set()
    for node in ast.walk(ast.parse(LEFTOVERS.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            imported |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            imported.add((node.module or "").split(".")[0] if not node.level else ".")
    assert imported and imported <= set(sys.stdlib_module_names), imported


def test_the_bootstrap_and_the_recorder_use_it_and_write_no_copy_of_their_own():
    bootstrap = (ROOT / "graders" / "sandbox" / "_bootstrap.py").read_text(encoding="utf-8")
    recorder = (ROOT / "graders" / "inprocess" / "record.py").read_text(encoding="utf-8")
    assert '"leftovers.py"' in bootstrap and 'shared["put_back"]' in bootstrap
    assert "from graders.recording.leftovers import put_back" in recorder
    for text in (bootstrap, recorder):
        assert "os.mkfifo" not in text and "a2b_base64" not in text


#: A restart that says what it found: every entry of /work and of the temp folder.
REPORTER = f"""
import json, os, stat, tempfile

{__import__("inspect").getsource(tree)}

def save_checkpoint(state):
    pass

def run_agent(task, tools, call_model, execute_tool):
    found = {{"work": tree(".", os.getpid()), "tmp": tree(tempfile.gettempdir(), os.getpid())}}
    print("FOUND " + json.dumps(found, sort_keys=True), flush=True)
    return {{}}
"""


def _found(rec) -> dict:
    line = [x for x in (rec.stdout_tail or "").splitlines() if x.startswith("FOUND ")]
    assert line, (rec.ended, rec.error, rec.load, rec.stdout_tail, rec.stderr_tail)
    return json.loads(line[-1].removeprefix("FOUND "))


@pytest.mark.sandbox
def test_the_sandbox_and_the_in_process_recorder_restart_into_the_same_folder():
    from fake_llm import load_scenario
    from graders.inprocess.record import record_in_process
    from graders.sandbox import record, sandbox_problem

    if sandbox_problem():
        pytest.skip(sandbox_problem())
    scenario = load_scenario("support-tickets")
    boxed = _found(record(REPORTER, scenario, seed=SEED))
    unboxed = _found(record_in_process(REPORTER, scenario, seed=SEED))
    assert boxed == unboxed == {"work": WANT_WORK, "tmp": WANT_TMP}
