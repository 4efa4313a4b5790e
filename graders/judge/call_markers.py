"""Which trace marker is which call: the grading process's numbers put on the trace's markers.

The grading process numbers every frame it receives, 1, 2, 3, ... in arrival order
(``Recording.frames``, each with the header the submission wrote); the trace shows each header a
process of the submission wrote on the grader's socket (a marker). A frame is accepted only where
the trace shows that very header, in the same order: the header carries the digest of the
frame's body, so its marker stands for that call and no other. A frame with no marker (sent
where the observer does not look) or a marker with no frame is the submission's failure: the
grader cannot place that call among its file operations.

A recording whose observer numbered the markers itself (``Recording.ops``, the in-process
recorder) is taken as it is; one with no frames at all (written by hand, in tests) keeps the
numbers its markers carry.
"""

from __future__ import annotations

import bisect
import json

from graders.judge.recording import Recording
from graders.judge.trace import Op

__all__ = ["IncompleteRecording", "number_markers", "frame_words"]


class IncompleteRecording(RuntimeError):
    """The grader lost part of a recording (a fault of the grading machine, never the
    submission's): the run is recorded again, and reported as a grader fault if it happens
    twice."""


def frame_words(rec: Recording, seq: int) -> str:
    """Frame ``seq`` in words: ``"tool call 2 (list_tickets)"``, ``"the start of save 3"``."""
    call = next((c for c in rec.calls if c.seq == seq), None)
    if call is not None:
        name = f" ({call.name})" if call.op == "tool" and isinstance(call.name, str) else ""
        return f"{call.op} call {call.index}{name}"
    frame = next((f for f in rec.frames if f["seq"] == seq), {})
    marker = next((m for m in rec.markers if m["seq"] == seq), None)
    if marker is not None:
        edge = "start" if marker["op"] == "save_start" else "end"
        return f"the {edge} of save {marker.get('n')}"
    return {"loaded": "the message that your code was loaded",
            "finished": "the message that run_agent returned",
            "raised": "the message that run_agent raised"}.get(frame.get("op"), "a frame")


def number_markers(rec: Recording, ops: list[Op]) -> tuple[list[Op], list[str]]:
    """``ops`` with each call marker numbered as the grading process numbered its frame, and
    what was wrong (the submission's doing, in words); markers with no frame are left out."""
    if rec.ops is not None:
        return ops, _unplaced(rec, ops)
    if not rec.frames:
        return ops, _legacy(rec, ops)
    saves = {m["seq"]: m.get("n") for m in rec.markers}
    markers = [op for op in ops if op.call == "marker"]
    where: dict[str, list[int]] = {}
    for j, op in enumerate(markers):
        where.setdefault(_key(op.frame), []).append(j)
    matched: dict[int, dict] = {}
    unmatched_frames: list[int] = []
    i = 0  # markers before i are matched or passed over: the order must be the same
    for frame in rec.frames:
        places = where.get(_key(frame["header"]), [])
        k = bisect.bisect_left(places, i)
        j = next((places[n] for n in range(k, len(places)) if _whole(markers[places[n]])), None)
        if j is None:
            unmatched_frames.append(frame["seq"])
            continue
        mark = {"seq": frame["seq"], "op": frame["op"]}
        if frame["seq"] in saves:
            mark["n"] = saves[frame["seq"]]
        matched[id(markers[j])] = mark
        i = j + 1
    # markers after the last frame matched are frames the grader never read (the run was over,
    # or stopped): nothing was served for them, nothing is placed by them
    unmatched_markers = i - len(matched)
    kept: list[Op] = []
    for op in ops:
        if op.call == "marker":
            if id(op) not in matched:
                continue
            op.frame = matched[id(op)]
        op.index = len(kept)
        kept.append(op)
    problems = []
    if unmatched_frames:
        problems.append(
            f"the grader received {frame_words(rec, unmatched_frames[0])}"
            + (f" and {len(unmatched_frames) - 1} more frame(s)" if len(unmatched_frames) > 1
               else "")
            + " without the record of your code's system calls showing it sent")
    if unmatched_markers:
        problems.append(f"the record of your code's system calls shows {unmatched_markers} "
                        "frame(s) written to the grader's channel that never arrived whole")
    if problems and rec.trace_lost:
        raise IncompleteRecording(f"the trace is incomplete: {rec.trace_lost}")
    return kept, problems


def _key(header) -> str:
    return json.dumps(header, sort_keys=True, default=repr)


def _whole(op: Op) -> bool:
    """Whether marker ``op`` wrote its whole header line (a frame's header is one write)."""
    data = op.args[1] if len(op.args) > 1 and isinstance(op.args[1], bytes) else b""
    end = data.find(b"\n")
    return end >= 0 and op.ret is not None and op.ret > end


def _unplaced(rec: Recording, ops: list[Op]) -> list[str]:
    """Calls the recorder's own markers do not place (its markers carry trusted numbers)."""
    placed = {(op.frame or {}).get("seq") for op in ops if op.call == "marker"}
    missing = [c for c in rec.calls if c.seq not in placed]
    if missing:
        return [f"the record holds no marker of {frame_words(rec, missing[0].seq)}"]
    return []


def _legacy(rec: Recording, ops: list[Op]) -> list[str]:
    """A recording with no frames: its markers' own numbers (hand-written recordings)."""
    placed = {(op.frame or {}).get("seq") for op in ops if op.call == "marker"}
    missing = [c for c in rec.calls if c.seq not in placed]
    if missing and not rec.protocol:
        raise IncompleteRecording(
            f"the trace holds no record of {len(missing)} of the {len(rec.calls)} calls the "
            "grader served (is the grading machine's temporary space full?)")
    if missing:
        return [f"the trace holds no record of {len(missing)} of the calls the grader served, "
                "so the order of your file operations around them is unknown"]
    return []
