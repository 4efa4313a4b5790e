"""The channel between a submission and the grader, pure: frames as they arrive, numbered by the
grader, and each matched to the trace's marker of that very header (no sandbox needed)."""

from __future__ import annotations

import hashlib
import json

from graders.judge.recording import Call, Recording
from graders.judge.trace import number_markers, parse_trace
from graders.recording.framing import FrameReader
from tests.traces import hx


def frame(op: str, fields: dict, **extra) -> tuple[dict, bytes]:
    body = json.dumps(fields).encode()
    header = {"op": op, "len": len(body), "sha256": hashlib.sha256(body).hexdigest(), **extra}
    return header, b"CKL1 " + json.dumps(header).encode() + b"\n" + body


def marker(pid: int, header: dict, *, written: int | None = None) -> str:
    line = b"CKL1 " + json.dumps(header).encode() + b"\n"
    n = len(line) if written is None else written
    return f'{pid}  write(4<UNIX-STREAM:[77->78]>, "{hx(line)}", {len(line)}) = {n}'


def test_frames_are_numbered_as_they_arrive_whatever_number_they_carry():
    protocol: list[str] = []
    reader = FrameReader(protocol)
    _, one = frame("model", {"messages": []}, seq=7)
    _, two = frame("tool", {"name": "t", "input": {}}, seq=7)
    reader.feed(one + two[:10])
    first = list(reader.frames())
    reader.feed(two[10:])
    second = list(reader.frames())
    assert [(f.seq, f.op) for f in first + second] == [(1, "model"), (2, "tool")]
    assert protocol == []


def test_a_body_that_is_not_what_its_header_says_is_no_frame_but_keeps_its_number():
    protocol: list[str] = []
    reader = FrameReader(protocol)
    header, data = frame("tool", {"name": "t", "input": {}})
    forged = data.replace(b'"t"', b'"u"')
    reader.feed(forged + frame("model", {})[1])
    found = list(reader.frames())
    assert [(f.seq, f.op) for f in found] == [(1, None), (2, "model")]
    assert found[0].header == header and protocol == ["a malformed grader frame"]


def _recording(headers: list[dict], trace: list[str], ended: str = "finished") -> Recording:
    rec = Recording("support-tickets", "loop", True, ended=ended, trace="\n".join(trace),
                    socket_inode=77)
    for seq, header in enumerate(headers, 1):
        rec.frames.append({"seq": seq, "op": header["op"], "header": header})
        if header["op"] in ("model", "tool"):
            rec.calls.append(Call(seq, header["op"], seq))
    return rec


def _numbered(rec: Recording):
    ops, problems = number_markers(rec, parse_trace(rec.trace, rec.socket_inode))
    return [(op.frame["seq"], op.frame["op"]) for op in ops if op.call == "marker"], problems


def test_each_marker_gets_the_number_the_grader_gave_its_frame():
    a, b = frame("model", {}, seq=2)[0], frame("tool", {"name": "t"}, seq=1)[0]
    rec = _recording([a, b], [marker(5, a), marker(6, b)])
    assert _numbered(rec) == ([(1, "model"), (2, "tool")], [])


def test_a_frame_the_trace_does_not_show_is_a_problem_of_the_submission():
    a, b, c = frame("model", {})[0], frame("tool", {"name": "t"})[0], frame("model", {"x": 1})[0]
    rec = _recording([a, b, c], [marker(5, a), marker(5, c)])  # b sent with sendmsg alone
    placed, problems = _numbered(rec)
    assert placed == [(1, "model"), (3, "model")]
    assert problems and "the grader received tool call 2" in problems[0]


def test_a_marker_the_grader_never_received_and_a_header_written_in_part_are_problems():
    a, b = frame("model", {})[0], frame("tool", {"name": "t"})[0]
    extra = frame("tool", {"name": "forged"})[0]
    rec = _recording([a, b], [marker(5, a), marker(5, extra), marker(5, b)])
    assert _numbered(rec)[1] == ["the record of your code's system calls shows 1 frame(s) "
                                 "written to the grader's channel that never arrived whole"]
    rec = _recording([a, b], [marker(5, a), marker(5, b, written=10)])
    assert "the grader received tool call 2" in _numbered(rec)[1][0]


def test_markers_after_the_last_frame_received_are_frames_the_grader_never_read():
    a, b = frame("model", {})[0], frame("tool", {"name": "t"})[0]
    rec = _recording([a], [marker(5, a), marker(6, b)], ended="hung")
    assert _numbered(rec) == ([(1, "model")], [])


def test_a_recording_whose_observer_numbered_the_markers_is_taken_as_it_is():
    a = frame("model", {})[0]
    rec = _recording([a], [])
    rec.ops = parse_trace(marker(5, {"seq": 1, "op": "model"}), 77)
    ops, problems = number_markers(rec, rec.ops)
    assert ops is rec.ops and problems == [] and ops[0].frame == {"seq": 1, "op": "model"}
