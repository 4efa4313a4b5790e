"""Hand-made inputs for the judge's pure tests, shared by several test modules.

Lines of a trace as ``strace -f -xx -yy`` prints them (every string in hex, every fd with its path;
the submission's working folder is ``/work``, the grader's socket inode 77), and the checkpoint
states and observations of the ``support-tickets`` scenario that a correct loop leaves.
"""

from __future__ import annotations

import json

from fake_llm import load_scenario
from graders.judge.crash_points import CrashPoint, point_from_id
from graders.judge.recording import Observation

__all__ = ["SAVE", "SC", "CALLS", "hx", "openat", "write", "rename", "marker", "state", "ledger",
           "observe", "torn_point"]

#: A small save, as bytes written.
SAVE = json.dumps({"turns": 1}).encode()


def hx(data: bytes | str) -> str:
    """A string argument as ``strace -xx`` prints it."""
    if isinstance(data, str):
        data = data.encode()
    return "".join(f"\\x{b:02x}" for b in data)


def openat(pid, path, flags, fd):
    return (f'{pid}  openat(AT_FDCWD<{hx("/work")}>, "{hx(path)}", {flags}, 0666) = '
            f'{fd}<{hx(path if path.startswith("/") else "/work/" + path)}>')


def write(pid, fd, path, data):
    full = path if path.startswith("/") else "/work/" + path
    return f'{pid}  write({fd}<{hx(full)}>, "{hx(data)}", {len(data)}) = {len(data)}'


def rename(pid, src, dst):
    return f'{pid}  rename("{hx(src)}", "{hx(dst)}") = 0'


def marker(pid, seq, op):
    frame = b"CKL1 " + json.dumps({"seq": seq, "op": op, "len": 2}).encode() + b"\n"
    return f'{pid}  write(4<UNIX-STREAM:[77->78]>, "{hx(frame)}", {len(frame)}) = {len(frame)}'


# -- checkpoint states and observations ----------------------------------------------------------

SC = load_scenario("support-tickets")
CALLS = SC.tool_calls


def state(results: int, pending: int | None = None, **changes) -> dict:
    """The state a correct loop holds with ``results`` tool results recorded.

    ``pending`` (a call number) adds the assistant message naming it and sets pendingToolUse.
    """
    messages = SC.conversation()[: 1 + 2 * results]
    if pending is not None:
        messages.append(SC.conversation()[2 * pending - 1])
    data = {
        "version": 1,
        "task": SC.task,
        "turns": results,
        "tokensUsed": 42,
        "messages": messages,
        "pendingToolUse": dict(CALLS[pending - 1]) if pending else None,
    }
    data.update(changes)
    return data


def ledger(ran: int, *, returned: bool = True) -> list[dict]:
    return [
        {"index": i, "name": CALLS[i - 1]["name"], "input": CALLS[i - 1]["input"],
         **({"result": SC.tool_results[i - 1]} if returned else {})}
        for i in range(1, ran + 1)
    ]


def observe(point: str, checkpoint: dict | str | None, ran: int, *, ended: str = "killed",
            **fields) -> Observation:
    text = checkpoint if isinstance(checkpoint, str) or checkpoint is None else json.dumps(
        checkpoint)
    parse_error = None
    if text is not None:
        try:
            json.loads(text)
        except ValueError as err:
            parse_error = f"is not valid JSON ({err})"
    obs = Observation(
        scenario=SC.name, point=point, kind=point_from_id(point).kind, ended=ended,
        checkpoint=text, checkpoint_bytes=None if text is None else len(text.encode()),
        parse_error=parse_error, ledger=ledger(ran),
    )
    for key, value in fields.items():
        setattr(obs, key, value)
    return obs


def torn_point(before: dict | None, after: dict, opened: list[str]) -> CrashPoint:
    """Halfway through save 2 (save point B after tool 1), the files ``opened`` written."""
    text_after = json.dumps(after)
    return CrashPoint(
        "torn_write_save_2", "torn_write", 2, "halfway through save 2 (save point B, after "
        "tool 1 returned)", save={"n": 2, "opened": opened, "renames": [], "removes": []},
        before=None if before is None else json.dumps(before), after=text_after,
        tear_expected=len(text_after), tear_limit=len(text_after) // 2,
    )
