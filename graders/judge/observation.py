"""What one crash run left behind, read from disk by the deciding process.

:func:`collect` turns a child's working directory and harness directory (its event and ledger
files) into an :class:`Observation`. Nothing here runs student code.
"""

from __future__ import annotations

import json
import os
import signal
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from graders.inprocess.child import CHECKPOINT, EVENTS, LEDGER, STDERR, STDOUT
from graders.text import file_tail

__all__ = ["Observation", "SaveRecord", "collect", "describe_error"]



@dataclass
class SaveRecord:
    """One save (one call of ``save_checkpoint``), as the run's events describe it.

    ``phase`` is where in the loop it happened: ``"A"`` (after the model named tool ``tool``,
    before it ran), ``"B"`` (after tool ``tool`` returned), ``"start"`` (before the first model
    call) or ``"end"`` (after the final answer). ``pending`` is the ``pendingToolUse`` of the
    state it was given. ``opened``, ``renames`` and ``removes`` are the file operations it made
    (names relative to the working directory). ``snapshot`` is ``checkpoint.json`` as the save left
    it (dry run only).
    """

    n: int
    phase: str
    tool: int | None
    pending: Any = None
    completed: bool = False
    raised: str | None = None
    opened: list[str] = field(default_factory=list)
    renames: list[list[str | None]] = field(default_factory=list)
    removes: list[str] = field(default_factory=list)
    sizes: dict[str, int | None] = field(default_factory=dict)
    snapshot: str | None = None
    snapshot_bytes: int | None = None

    @property
    def in_place(self) -> bool:
        """Whether this save opened ``checkpoint.json`` itself for writing."""
        return CHECKPOINT in self.opened

    @property
    def where(self) -> str:
        """Where the save happened, in the lesson's words."""
        if self.phase == "A":
            return f"save point A, before tool {self.tool} ran"
        if self.phase == "B":
            return f"save point B, after tool {self.tool} returned"
        if self.phase == "start":
            return "before the first model call"
        return "after the final answer"

    def summary(self) -> dict[str, Any]:
        """This record without the snapshot text."""
        data = asdict(self)
        data.pop("snapshot")
        return data


@dataclass
class Observation:
    """What a run of the submission did and left on disk at one crash point.

    Attributes:
        scenario, point, kind: which run this was.
        ended: how the child ended: ``"killed"`` (at its crash point, as planned), ``"finished"``
            (``run_agent`` returned), ``"raised"`` (the submission raised: see ``error``),
            ``"hung"`` (killed after ``timeout`` seconds), ``"died"`` (ended some other way:
            see ``detail``), ``"not_loaded"`` or ``"skipped"``.
        detail: ``ended`` in words.
        error: for ``"raised"``: ``{"type", "message", "line", "code", "function"}``.
        checkpoint: the text of ``checkpoint.json`` (None if there was none); bytes that are not
            UTF-8 are kept as surrogate escapes.
        checkpoint_bytes: its size in bytes.
        parse_error: why it is not valid JSON, or None.
        files: every other file in the working directory: name -> size (``"dir/"`` for folders).
        elsewhere: files named checkpoint.json in folders below the working directory.
        ledger: the tool executions, in order: ``{"index", "name", "input", "result"}``
            (``"error"`` instead of ``"result"`` if the tool refused the call; neither if the
            child was killed before the tool returned).
        saves: the saves, in order, as :class:`SaveRecord`.
        model_calls, tool_calls: how many calls the submission made.
        torn: for a torn write: ``{"path", "limit", "bytes_on_disk", "bytes_expected"}``.
        kill: why the harness killed the child, if it did.
        events: the raw timeline of the run.
        stdout_tail, stderr_tail: the end of what the submission printed.
        elapsed: seconds the child ran; cpu: CPU seconds it used (None where unknown).
    """

    scenario: str
    point: str
    kind: str
    ended: str
    detail: str = ""
    error: dict[str, Any] | None = None
    checkpoint: str | None = None
    checkpoint_bytes: int | None = None
    parse_error: str | None = None
    files: dict[str, int | str] = field(default_factory=dict)
    elsewhere: list[str] = field(default_factory=list)
    ledger: list[dict[str, Any]] = field(default_factory=list)
    saves: list[SaveRecord] = field(default_factory=list)
    model_calls: int = 0
    tool_calls: int = 0
    torn: dict[str, Any] | None = None
    kill: str | None = None
    events: list[dict[str, Any]] = field(default_factory=list)
    stdout_tail: str = ""
    stderr_tail: str = ""
    elapsed: float = 0.0
    cpu: float | None = None
    exit_code: int | None = None
    signal: int | None = None

    @property
    def state(self) -> Any:
        """``checkpoint.json`` parsed, or None if it is missing or not valid JSON."""
        if self.checkpoint is None or self.parse_error is not None:
            return None
        return json.loads(self.checkpoint)

    @property
    def saves_done(self) -> int:
        """How many saves returned."""
        return sum(1 for s in self.saves if s.completed)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able dict (``json.dumps`` works on it)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Observation:
        """The observation ``to_dict`` described."""
        data = dict(data)
        data["saves"] = [SaveRecord(**s) for s in data.get("saves", [])]
        return cls(**data)


def describe_error(error: dict[str, Any] | None) -> str:
    """``ValueError: bad (line 12 of your code: `x = y`)`` for an exception summary."""
    if not error:
        return "an error"
    text = error.get("type", "Exception")
    if error.get("message"):
        text += f": {error['message']}"
    if error.get("line"):
        where = f"line {error['line']} of your code"
        if error.get("code"):
            where += f": `{error['code']}`"
        text += f" ({where})"
    return text


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    try:
        data = path.read_bytes()
    except OSError:
        return []
    out = []
    for line in data.splitlines():
        try:
            item = json.loads(line)
        except ValueError:
            continue  # a line cut short by the kill
        if isinstance(item, dict):
            out.append(item)
    return out



def _ledger(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    entries: dict[int, dict[str, Any]] = {}
    for line in lines:
        entry = entries.setdefault(line["index"], {"index": line["index"]})
        entry.update(line)
    return [entries[k] for k in sorted(entries)]


def saves_from_events(events: list[dict[str, Any]]) -> list[SaveRecord]:
    """The saves a run made, each placed in the loop (phase A, B, ...) by the events around it."""
    saves: dict[int, SaveRecord] = {}
    phase, tool = "start", None
    tools_done = 0
    for ev in events:
        e = ev.get("e")
        if e == "model_end":
            if ev.get("stop") == "tool_use":
                phase, tool = "A", tools_done + 1
            else:
                phase, tool = "end", None
        elif e == "tool_end":
            tools_done = ev["k"]
            phase, tool = "B", ev["k"]
        elif e == "tool_start":
            tools_done = ev["k"] - 1
        elif e == "save_start":
            saves[ev["n"]] = SaveRecord(n=ev["n"], phase=phase, tool=tool,
                                        pending=ev.get("pending"))
        elif ev.get("n") in saves:
            record = saves[ev["n"]]
            if e == "open_w":
                record.opened.append(ev["path"])
            elif e == "rename":
                record.renames.append([ev.get("src"), ev.get("dst")])
            elif e == "remove":
                record.removes.append(ev["path"])
            elif e == "save_end":
                record.completed = True
                record.sizes = ev.get("sizes") or {}
            elif e == "save_raised":
                record.raised = ev.get("error")
    return [saves[n] for n in sorted(saves)]


def _listing(cwd: Path) -> dict[str, int | str]:
    files: dict[str, int | str] = {}
    try:
        entries = list(os.scandir(cwd))
    except OSError:
        return files
    for entry in entries:
        if entry.name == CHECKPOINT:
            continue
        try:
            files[entry.name] = "dir/" if entry.is_dir() else entry.stat().st_size
        except OSError:
            files[entry.name] = 0
    return files


def _ending(status: dict[str, Any], events: list[dict[str, Any]]) -> tuple[str, str, Any, Any]:
    """(ended, detail, error, kill) from the wait status and the last events."""
    kill = next((ev for ev in reversed(events) if ev.get("e") == "kill"), None)
    tear = next((ev for ev in reversed(events) if ev.get("e") == "tear"), None)
    last = events[-1] if events else {}
    sig = status.get("signal")
    if status.get("runner_died"):
        return ("died", "stopped the grader's own process (the runner that starts each run), "
                "so nothing after it could run: does your code kill its parent process, or "
                f"change a module the grader relies on? ({status['runner_died']})", None, None)
    if status.get("hung"):
        detail = f"still running after {status.get('timeout', 0):g} s, so it was killed"
        return "hung", detail, None, None
    if sig == signal.SIGKILL and kill is not None:
        return "killed", "killed at its crash point", None, kill.get("why")
    if sig == getattr(signal, "SIGXFSZ", None) and tear is not None:
        return "killed", "killed halfway through the write (file size limit)", None, "torn_write"
    if status.get("exit") == 0 and last.get("e") == "finished":
        return "finished", "run_agent returned", None, None
    if status.get("exit") == 1 and last.get("e") == "raised":
        error = {k: v for k, v in last.items() if k != "e"}
        return "raised", f"raised {describe_error(error)}", error, None
    if sig is not None:
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = str(sig)
        return "died", f"was killed by signal {name}, not by the harness", None, None
    return "died", f"ended the process itself with exit status {status.get('exit')}", None, None


def collect(scenario: str, point: str, kind: str, cwd: Path, hdir: Path,
            status: dict[str, Any], *, dry: bool = False) -> Observation:
    """Read what the child at ``point`` left in ``cwd`` and ``hdir`` into an Observation."""
    events = _read_jsonl(hdir / EVENTS)
    ended, detail, error, kill = _ending(status, events)
    obs = Observation(
        scenario=scenario, point=point, kind=kind, ended=ended, detail=detail, error=error,
        kill=kill, events=events, elapsed=round(float(status.get("elapsed", 0.0)), 6),
        cpu=None if status.get("cpu") is None else round(float(status["cpu"]), 6),
        exit_code=status.get("exit"), signal=status.get("signal"),
    )
    obs.ledger = _ledger(_read_jsonl(hdir / LEDGER))
    obs.saves = saves_from_events(events)
    obs.model_calls = sum(1 for ev in events if ev.get("e") == "model_start")
    obs.tool_calls = sum(1 for ev in events if ev.get("e") == "tool_start")
    obs.stdout_tail = file_tail(hdir / STDOUT)
    obs.stderr_tail = file_tail(hdir / STDERR)
    try:
        raw = (cwd / CHECKPOINT).read_bytes()
    except FileNotFoundError:
        raw = None
    except OSError as err:  # a directory named checkpoint.json, say
        raw = None
        obs.parse_error = f"could not be read ({err.strerror})"
    if raw is not None:
        obs.checkpoint = raw.decode("utf-8", "surrogateescape")
        obs.checkpoint_bytes = len(raw)
        try:
            json.loads(raw.decode("utf-8"))
        except UnicodeDecodeError as err:
            obs.parse_error = f"is not UTF-8 text (byte {err.start})"
        except ValueError as err:
            obs.parse_error = f"is not valid JSON ({err})"
    obs.files = _listing(cwd)
    obs.elsewhere = sorted(str(p.relative_to(cwd)) for d in obs.files if obs.files[d] == "dir/"
                           for p in (cwd / d).rglob(CHECKPOINT))[:5]
    tear = next((ev for ev in events if ev.get("e") == "tear"), None)
    if tear is not None:
        path = tear.get("path") or CHECKPOINT
        target = Path(path) if os.path.isabs(path) else cwd / path
        try:
            on_disk = target.stat().st_size
        except OSError:
            on_disk = None
        obs.torn = {"path": path, "limit": tear.get("limit"), "bytes_on_disk": on_disk,
                    "bytes_expected": tear.get("expected")}
    if dry:
        for record in obs.saves:
            snap = hdir / f"snap-{record.n}"
            if snap.exists():
                data = snap.read_bytes()
                record.snapshot = data.decode("utf-8", "surrogateescape")
                record.snapshot_bytes = len(data)
    return obs
