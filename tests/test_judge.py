"""The judge on recorded traces: parsing strace's lines, replaying them, every crash state.

Pure tests: the traces are written here, in strace's own format, so each behaviour of the replay
is pinned down without running anything.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

from graders.judge.replay import replay
from graders.judge.trace import parse_trace
from tests.traces import SAVE, hx, marker, openat, rename, write


def states(lines):
    ops = parse_trace("\n".join(lines), socket_inode=77)
    moments, unfollowed = replay(ops)
    return ops, moments, unfollowed


def test_a_marker_on_the_grader_socket_is_a_call_and_other_writes_are_not():
    ops = parse_trace("\n".join([marker(5, 1, "model"),
                                 f'5  write(1</dev/pts/0<char 136:0>>, "{hx("CKL1 x")}", 6) = 6']),
                      socket_inode=77)
    assert [op.call for op in ops] == ["marker"], "a write to the terminal is no file operation"
    assert ops[0].frame == {"seq": 1, "op": "model", "len": 2}
    other_socket = parse_trace(marker(5, 1, "model"), socket_inode=99)
    assert [op.call for op in other_socket] != ["marker"], "only the grader's own socket"


def test_a_socket_annotation_with_an_arrow_is_read_whole():
    ops = parse_trace(marker(5, 3, "tool"), socket_inode=77)
    assert ops[0].args[0]["path"] == b"UNIX-STREAM:[77->78]"


def test_an_unfinished_call_is_placed_where_it_resumed():
    lines = [
        f'5  write(3<{hx("/work/checkpoint.json")}>, "{hx(SAVE)}", {len(SAVE)} <unfinished ...>',
        marker(6, 1, "tool"),
        f"5  <... write resumed>) = {len(SAVE)}",
    ]
    ops = parse_trace("\n".join(lines), socket_inode=77)
    assert [op.call for op in ops] == ["marker", "write"]
    assert ops[1].args[1] == SAVE and ops[1].pid == 5


def test_an_open_another_thread_interrupted_is_followed_as_strace_pads_its_result():
    """strace prints a resumed call's result in a column (``<... openat resumed>)      = 5``):
    the temp file opened that way is still the temp file the rename makes the checkpoint
    (a turn's tools in threads, each saving, met this under load and read "could not follow")."""
    tmp = "/work/checkpoint.ab12.tmp"
    lines = [
        f'5  openat(AT_FDCWD<{hx("/work")}>, "{hx(tmp)}", O_RDWR|O_CREAT|O_EXCL|O_CLOEXEC, 0600 '
        "<unfinished ...>",
        marker(6, 1, "tool"),
        f"5  <... openat resumed>)             = 3<{hx(tmp)}>",
        write(5, 3, tmp, SAVE),
        rename(5, tmp, "/work/checkpoint.json"),
    ]
    ops = parse_trace("\n".join(lines), socket_inode=77)
    assert [op.call for op in ops] == ["marker", "openat", "write", "rename"]
    moments, _ = replay(ops)
    assert moments[-1].kind == "file" and moments[-1].data == SAVE


def test_an_in_place_write_leaves_an_empty_file_then_half_a_file():
    ops, moments, _ = states([openat(5, "checkpoint.json", "O_WRONLY|O_CREAT|O_TRUNC", 3),
                              write(5, 3, "checkpoint.json", SAVE)])
    kinds = [(m.how, m.kind, m.data) for m in moments]
    assert ("before", "file", b"") in kinds  # after O_TRUNC, before the write
    assert ("during", "file", SAVE[: len(SAVE) // 2]) in kinds
    assert kinds[-1] == ("end", "file", SAVE)


def test_temp_then_rename_never_shows_a_partial_checkpoint():
    ops, moments, _ = states([
        openat(5, "checkpoint.json", "O_WRONLY|O_CREAT|O_TRUNC", 3),
        write(5, 3, "checkpoint.json", b"{}"),
        openat(5, "/work/ck.tmp", "O_RDWR|O_CREAT|O_EXCL", 3),
        write(5, 3, "/work/ck.tmp", SAVE),
        rename(5, "/work/ck.tmp", "checkpoint.json"),
    ])
    after_first = [m for m in moments if m.position >= 2]
    assert {m.data for m in after_first} <= {b"{}", SAVE}
    assert any(m.how == "during" and m.data == b"{}" for m in after_first), \
        "the write to the temp file is a moment too: checkpoint.json is untouched there"


def test_delete_then_rename_leaves_a_moment_with_no_checkpoint():
    ops, moments, _ = states([
        openat(5, "/work/a.tmp", "O_RDWR|O_CREAT", 3), write(5, 3, "/work/a.tmp", b"{}"),
        rename(5, "/work/a.tmp", "checkpoint.json"),
        openat(5, "/work/b.tmp", "O_RDWR|O_CREAT", 3), write(5, 3, "/work/b.tmp", SAVE),
        f'5  unlink("{hx("checkpoint.json")}") = 0',
        rename(5, "/work/b.tmp", "checkpoint.json"),
    ])
    before_rename = [m for m in moments if m.how == "before" and m.op.call == "rename"]
    assert before_rename[-1].kind == "absent"


def test_a_failed_rename_changes_nothing():
    ops, moments, _ = states([
        openat(5, "/tmp/t", "O_RDWR|O_CREAT", 3), write(5, 3, "/tmp/t", SAVE),
        f'5  rename("{hx("/tmp/t")}", "{hx("checkpoint.json")}") = -1 EXDEV (Invalid '
        'cross-device link)',
    ])
    assert moments[-1].kind == "absent"


def test_a_copy_through_sendfile_is_replayed_from_the_source_bytes():
    ops, moments, _ = states([
        openat(5, "/tmp/t", "O_RDWR|O_CREAT", 3), write(5, 3, "/tmp/t", SAVE),
        f'5  lseek(3<{hx("/tmp/t")}>, 0, SEEK_SET) = 0',
        openat(5, "checkpoint.json", "O_WRONLY|O_CREAT|O_TRUNC", 4),
        f'5  sendfile(4<{hx("/work/checkpoint.json")}>, 3<{hx("/tmp/t")}>, NULL, '
        f'{len(SAVE)}) = {len(SAVE)}',
    ])
    assert moments[-1].data == SAVE
    assert any(m.how == "during" and m.data == SAVE[: len(SAVE) // 2] for m in moments)


def test_a_link_then_a_write_through_the_other_name_changes_the_checkpoint():
    ops, moments, _ = states([
        openat(5, "/work/x", "O_RDWR|O_CREAT", 3),
        f'5  link("{hx("/work/x")}", "{hx("checkpoint.json")}") = 0',
        write(5, 3, "/work/x", SAVE),
    ])
    assert moments[-1].data == SAVE
    assert any(m.how == "during" for m in moments), "a write into the checkpoint by another name"


def test_a_fifo_named_checkpoint_json_is_seen_as_one():
    ops, moments, _ = states([f'5  mknodat(AT_FDCWD<{hx("/work")}>, "{hx("checkpoint.json")}", '
                              'S_IFIFO|0666) = 0'])
    assert moments[-1].kind == "fifo"


def test_a_relative_path_through_proc_self_cwd_is_the_working_directory():
    ops, moments, _ = states([
        openat(5, "/work/t", "O_RDWR|O_CREAT", 3), write(5, 3, "/work/t", SAVE),
        rename(5, "/work/t", "/proc/self/cwd/checkpoint.json"),
    ])
    assert moments[-1].data == SAVE


def test_a_call_missing_from_the_trace_is_the_grader_s_loss_unless_the_code_flooded_it():
    import pytest

    from fake_llm import load_scenario
    from graders.judge.matrix import IncompleteRecording, build_matrix
    from graders.judge.recording import Call, Recording

    scenario = load_scenario("support-tickets")
    trace = "\n".join([marker(5, 1, "model")])
    rec = Recording("support-tickets", "loop", True, ended="finished", trace=trace,
                    socket_inode=77, calls=[Call(1, "model", 1), Call(2, "tool", 1)])
    with pytest.raises(IncompleteRecording):
        build_matrix(rec, scenario)
    rec.protocol.append("a record too big to keep")
    matrix = build_matrix(rec, scenario)
    assert any("no record of 1 of the calls" in d for d in matrix.discrepancies)


def fsync(pid, fd, path):
    return f'{pid}  fsync({fd}<{hx(path)}>) = 0'


def test_replays_in_many_threads_see_the_same_moments_as_one_replay():
    """The temp file is bound to checkpoint.json only by its creation number; a number shared
    across threads (dev check grades two submissions at once) lost the moment before the fsync
    that comes after the rename, and a save that renames before it syncs passed Level 3."""
    import concurrent.futures

    lines = [openat(5, "/work/ck.tmp", "O_RDWR|O_CREAT|O_EXCL", 3),
             write(5, 3, "/work/ck.tmp", SAVE),
             rename(5, "/work/ck.tmp", "/work/checkpoint.json"),
             fsync(5, 3, "/work/checkpoint.json")] * 40
    ops = parse_trace("\n".join(lines), socket_inode=77)

    def shape(_=None):
        return [(m.position, m.how, m.data) for m in replay(ops)[0]]

    alone = shape()
    assert [how for _, how, _data in alone if how == "before"].count("before") == 40 * 3, \
        "a moment before every write, rename and fsync of a file bound to checkpoint.json"
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        assert all(s == alone for s in pool.map(shape, range(64)))


# -- what a torn write left, in words ------------------------------------------------------------

def _torn_verdict(content: str, opened: list[str], *, renames=(), files=None):
    from graders.judge.checkpoint_rules import check
    from tests.traces import SC, observe, state, torn_point

    point = torn_point(state(0, pending=1), state(1), opened)
    point.save["renames"] = [list(r) for r in renames]
    obs = observe(point.id, content, 1)
    obs.files = dict(files or {})
    return point, check(obs, SC, point)


def test_an_emptied_file_torn_in_place_holds_a_prefix_of_the_new_save_and_none_of_the_old():
    from tests.traces import state

    new = json.dumps(state(1))
    point, verdict = _torn_verdict(new[: len(new) // 3], ["checkpoint.json"])
    assert not verdict.passed and "a torn write" in verdict.message
    assert "none of the old one" in verdict.message
    assert "part old" not in verdict.message


def test_a_slot_rewritten_without_truncation_is_part_new_part_old():
    from tests.traces import state

    old, new = json.dumps(state(0, pending=1)), json.dumps(state(1))
    cut = len(old) + (len(new) - len(old)) // 2  # past the old JSON, inside the new
    old, new = old.ljust(4096), new.ljust(4096)
    point, verdict = _torn_verdict(new[:cut] + old[cut:], ["checkpoint.json"])
    assert not verdict.passed and "part new save, part old save" in verdict.message


def test_a_temp_file_that_is_checkpoint_json_under_another_name_is_named_as_such():
    from tests.traces import state

    new = json.dumps(state(1))
    torn = new[:40]
    point, verdict = _torn_verdict(torn, ["checkpoint.json.tmp"],
                                   renames=[("checkpoint.json.tmp", "checkpoint.json")],
                                   files={"checkpoint.json.tmp": len(torn)})
    assert not verdict.passed and verdict.evidence["problem"] == "in_place_write"
    assert "one file with two names (a hard link)" in verdict.message


# -- the trust boundary: the judge pure, the observers never judging -----------------------------

ROOT = Path(__file__).resolve().parents[1]
JUDGE = ROOT / "graders" / "judge"
#: What the judge must never load: the observers (the untrusted side), the layer that drives
#: them, the exercises' checks, nbgrader, and anything that talks to the network.
NOT_FOR_THE_JUDGE = ("graders.inprocess", "graders.sandbox", "graders.grading", "graders.checks",
                     "graders.nbgrader_plumbing", "graders.gradescope", "graders.cli", "nbgrader",
                     "socket", "ssl", "http", "urllib.request", "requests", "httpx", "aiohttp",
                     "ftplib", "smtplib", "xmlrpc", "websocket", "websockets")
#: What of the judge an observer may load: the plain data types of what it records (a
#: Recording and its operations, the forking harness's Observation); never the judge's rules.
JUDGE_FOR_THE_OBSERVERS = ("graders.judge", "graders.judge.recording", "graders.judge.trace",
                           "graders.judge.recording")
NOT_FOR_THE_OBSERVERS = ("graders.judge", "graders.grading", "graders.checks",
                         "graders.nbgrader_plumbing", "graders.gradescope", "graders.cli")


def _imported(source: str, module: str) -> set[str]:
    """Every module ``source`` (the module ``module``) imports, at any depth, relative ones
    made absolute (``from graders.judge import trace`` counts as ``graders.judge.trace``)."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = module.split(".")[: -node.level]
                base = ".".join(package + ([node.module] if node.module else []))
            found.add(base)
            found |= {f"{base}.{alias.name}" for alias in node.names}
    return found


def _forbidden(names: set[str], bad: tuple[str, ...] = NOT_FOR_THE_JUDGE,
               allowed: tuple[str, ...] = ()) -> list[str]:
    """The names in ``bad`` (a module or anything in it), but for the modules ``allowed`` and
    the names imported from one of them (``graders.judge.trace.Op``)."""
    def ok(name: str) -> bool:
        owner = name.rpartition(".")[0]
        return name in allowed or (owner in allowed and owner + ".__init__" not in _PACKAGES)

    return sorted(n for n in names
                  if not ok(n) and any(n == b or n.startswith(b + ".") for b in bad))


#: The packages among the allowed modules: a name imported from one may be any of its modules.
_PACKAGES = {"graders.judge.__init__"}


def _loaded(modules: list[str]) -> list[str]:
    """Every module a fresh interpreter holds once it has imported ``modules``."""
    code = ("import importlib, json, sys\n"
            f"for name in {modules!r}:\n    importlib.import_module(name)\n"
            "print(json.dumps(sorted(sys.modules)))\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def _lazily_imported(loaded: list[str], bad, allowed=()) -> dict[str, list[str]]:
    """What the course's modules among ``loaded`` import inside their functions (a lazy import
    is loaded only when called) that is in ``bad``, by module."""
    found = {}
    for name in loaded:
        path = ROOT.joinpath(*name.split("."))
        path = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
        if name.split(".")[0] in ("graders", "fake_llm") and path.is_file():
            hits = _forbidden(_imported(path.read_text(encoding="utf-8"), name), bad, allowed)
            if hits:
                found[name] = hits
    return found


def _package_modules(*packages: str) -> list[str]:
    return [f"graders.{package}.{path.stem}" for package in packages
            for path in sorted((ROOT / "graders" / package).glob("*.py"))
            if path.stem != "__init__"]


def test_the_import_scan_sees_a_forbidden_import_wherever_it_hides():
    source = ("import json\n"
              "def f():\n"
              "    from graders.inprocess.collect import collect\n"
              "    import urllib.request\n"
              "from .. import sandbox\n"
              "from graders import checks\n")
    found = set(_forbidden(_imported(source, "graders.judge.x")))
    assert {"graders.checks", "graders.inprocess.collect", "graders.sandbox",
            "urllib.request"} <= found
    assert "json" not in found
    assert _forbidden(_imported("import socketserver_like\nimport jsonschema\n", "m")) == []
    assert _forbidden({"graders.judge.trace", "graders.judge.matrix"}, NOT_FOR_THE_OBSERVERS,
                      JUDGE_FOR_THE_OBSERVERS) == ["graders.judge.matrix"]


def test_the_judge_loads_nothing_from_the_untrusted_side_the_checks_nbgrader_or_the_network():
    """Followed through every import, at any depth: each judge module imported in a fresh
    interpreter, then what every course module it loaded imports inside its functions."""
    judge = _package_modules("judge")
    assert len(judge) > 10
    loaded = _loaded(judge)
    assert not _forbidden(set(loaded)), _forbidden(set(loaded))
    lazy = _lazily_imported(loaded, NOT_FOR_THE_JUDGE)
    assert not lazy, f"the judge must stay pure and trusted; these modules import: {lazy}"


def test_the_observers_load_none_of_the_judges_rules_and_the_sandbox_none_of_inprocess():
    """The sandbox and the in-process observers record; only the grading layer judges. Each of
    their modules, imported in a fresh interpreter, loads of the judge only the recording's
    plain data types, and nothing of the grading layer or the checks (lazy imports too); the
    sandbox loads nothing of the in-process observers."""
    sandbox = [m for m in _package_modules("sandbox") if not m.endswith(("_bootstrap", "_confine"))]
    observers = sandbox + _package_modules("inprocess")
    loaded = _loaded(observers)
    bad = _forbidden(set(loaded), NOT_FOR_THE_OBSERVERS, JUDGE_FOR_THE_OBSERVERS)
    assert not bad, f"the observers load: {bad}"
    lazy = _lazily_imported(loaded, NOT_FOR_THE_OBSERVERS, JUDGE_FOR_THE_OBSERVERS)
    assert not lazy, f"the observers import, inside their functions: {lazy}"
    in_sandbox = _loaded(sandbox)
    assert not [m for m in in_sandbox if m.startswith("graders.inprocess")]
    assert not _lazily_imported(in_sandbox, ("graders.inprocess",))
    in_process = _loaded(_package_modules("inprocess"))
    assert not [m for m in in_process if m.startswith("graders.sandbox")], (
        "what both observers share lives in graders.recording")
    assert not _lazily_imported(in_process, ("graders.sandbox",))
