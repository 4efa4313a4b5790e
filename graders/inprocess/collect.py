"""Read what one forked crash run left on disk into an :class:`~graders.judge.recording.
Observation`: the child's working directory (``checkpoint.json`` and what lies beside it) and
its harness directory (the event and ledger files, its output).

This is the forking harness's side (:mod:`graders.inprocess.forking`): the judge itself reads
no files. Nothing here runs student code.
"""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path
from typing import Any

from graders.inprocess.support import EVENTS, LEDGER, STDERR, STDOUT
from graders.judge.recording import Observation, SaveRecord
from graders.load_errors import describe_error
from graders.loop.protocol import CHECKPOINT
from graders.text import file_tail

__all__ = ["collect", "saves_from_events"]


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
        return "killed", "killed part-way through the write (file size limit)", None, "torn_write"
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
            reading = hdir / f"saved-{record.n}"
            if reading.exists():
                data = reading.read_bytes()
                record.checkpoint_text = data.decode("utf-8", "surrogateescape")
                record.checkpoint_bytes = len(data)
    return obs
