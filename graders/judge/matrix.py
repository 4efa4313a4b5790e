"""From one recorded run to the crash matrix: crash points, what was on disk at each, verdicts.

Crash points come from what was observed, never from calls of a name: each call the grader
served (``killed_during_model_call_k``, ``killed_during_tool_k``), each save (a group of file
operations on ``checkpoint.json``, or on a file renamed over it later, between two calls:
``torn_write_save_n`` for every moment inside it, ``killed_before_rename_save_n`` for the
moments just before it renames, links or removes a name), and the end (``no_crash``). A crash
point holds one or more moments; it passes when every one of them leaves what resume needs.

A recording's verdicts: every moment of every crash point checked as resume would read it.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any

from graders import load_errors
from graders.judge.check_state import new_run
from graders.judge.checkpoint_rules import check, load_error_verdict
from graders.judge.crash_points import (
    NO_CRASH,
    CrashPoint,
    Moment,
    in_save,
    moment_words,
    rename_label,
    save_label,
    tear_limit,
)
from graders.judge.recording import (
    CHANNEL,
    LOAD_POINT,
    UNOBSERVED,
    Observation,
    Reading,
    Recording,
    SaveRecord,
    Verdict,
    run_problems,
)
from graders.judge.replay import (
    BINDING,
    OverBudget,
    check_replay_budget,
    over_budget_message,
    replay,
)
from graders.judge.trace import IncompleteRecording, Op, number_markers, parse_trace
from graders.load_errors import describe_error

__all__ = ["Matrix", "build_matrix", "PointMoments", "tearing_moment", "IncompleteRecording",
           "judge", "load_message", "over_budget_verdict", "UNOBSERVED", "CHANNEL", "OVER_BUDGET"]


# -- matrix ----------------------------------------------------------------------------------------


_KIND_WORDS = {
    "fifo": "is a FIFO (a named pipe), not a file: resume's open would wait forever for a writer",
    "symlink": "is a symbolic link, not a file: resume would read whatever it points to",
    "directory": "is a folder, not a file",
    "special": "is a device or socket, not a file",
    "unknown": "was changed in a way the grader could not follow (a memory-mapped write, a "
               "splice, or a copy from outside the working directory), so what it held is "
               "unknown",
}


@dataclass
class PointMoments:
    """A crash point and the moments it stands for."""

    point: CrashPoint
    moments: list[Moment] = field(default_factory=list)


@dataclass
class Matrix:
    """Everything the judge derived from one recording.

    ``discrepancies`` are where the replay disagrees with what the grader read from disk or
    could not follow; ``channel`` where the calls the grader served and the trace's markers of
    them disagree (:mod:`graders.judge.trace`); both are the submission's doing.
    """

    recording: Recording
    points: list[PointMoments]
    saves: list[SaveRecord]
    discrepancies: list[str]
    ops: list[Op]
    channel: list[str] = field(default_factory=list)

    def observation(self, pm: PointMoments, moment: Moment) -> Observation:
        """What the judge reads for ``moment`` of crash point ``pm``."""
        return _observation(self, pm, moment)

    def marker_positions(self) -> dict:
        """Frame number -> the place of its call marker in the trace (computed once)."""
        cached = getattr(self, "_markers", None)
        if cached is None:
            cached = {op.frame.get("seq"): op.index for op in self.ops
                      if op.call == "marker" and isinstance(op.frame, dict)}
            self._markers = cached
        return cached


def _describe_write(moment: Moment) -> str:
    """When ``moment`` comes, in the words the checks and the lessons share
    (:func:`graders.judge.crash_points.moment_words`)."""
    return moment_words(moment)


def build_matrix(rec: Recording, scenario) -> Matrix:
    """Replay ``rec`` and group its moments into crash points, in timeline order.

    The operations are ``rec.ops`` when the observer recorded them itself, else the parsed
    trace, whose call markers get the grading process's numbers. Raises
    :class:`~graders.judge.replay.OverBudget` for a run too costly to replay and
    :class:`IncompleteRecording` when the grader lost part of its own record.
    """
    ops = rec.ops if rec.ops is not None else parse_trace(rec.trace, rec.socket_inode)
    ops, channel = number_markers(rec, ops)
    check_replay_budget(ops)
    moments, unfollowed = replay(ops)
    saves, groups, call_moments = _group_moments(rec, ops, moments)
    _note_what_saves_did(saves, groups)
    end = moments[-1]
    _note_what_saves_left(saves, groups, moments, end)
    discrepancies = _cross_check(rec, call_moments, moments, unfollowed)
    if rec.ops is None and not rec.frames:  # written by hand: calls it does not place are
        discrepancies, channel = channel + discrepancies, []  # unknown order, as they were
    points = _points(rec, scenario, call_moments, saves, groups, end)
    return Matrix(rec, points, saves, discrepancies, ops, channel)


def _group_moments(rec: Recording, ops: list[Op], moments: list[Moment]
                   ) -> tuple[list[SaveRecord], list[list[Moment]], list[tuple[Moment, Any]]]:
    """The saves (one per group of moments between two calls), their moments, and the moment
    of each call the grader served with that call."""
    by_seq = {c.seq: c for c in rec.calls}
    saves: list[SaveRecord] = []
    groups: list[list[Moment]] = []
    current: list[Moment] | None = None
    phase, tool, tools_done = "start", None, 0
    save_starts = {op.index for op in ops if op.call == "marker"
                   and (op.frame or {}).get("op") == "save_start"}
    call_moments: list[tuple[Moment, Any]] = []
    for moment in moments:
        if moment.how == "call":
            seq = (moment.op.frame or {}).get("seq")
            call = by_seq.get(seq)
            if moment.op.index in save_starts:
                current = None
            if call is None:
                continue
            current = None
            call_moments.append((moment, call))
            if call.op == "model":
                if call.stop_reason == "tool_use":
                    phase, tool = "A", tools_done + 1
                else:
                    phase, tool = "end", None
            else:
                tools_done = call.index
                phase, tool = "B", call.index
            continue
        if moment.how == "end":
            break
        if current is None:
            current = []
            groups.append(current)
            saves.append(SaveRecord(n=len(saves) + 1, phase=phase, tool=tool, completed=True,
                                    thread=moment.op.pid if moment.op is not None else None))
        current.append(moment)
    return saves, groups, call_moments


def _note_what_saves_did(saves: list[SaveRecord], groups: list[list[Moment]]) -> None:
    """Each save's files opened, renames and removals."""
    for save, group in zip(saves, groups, strict=True):
        for moment in group:
            op = moment.op
            if moment.how != "before" or op is None:
                continue
            if op.call in ("openat", "open", "creat", "openat2") and op.ret_path:
                name = _relative(op.ret_path)
                if name not in save.opened:
                    save.opened.append(name)
            elif op.call in ("rename", "renameat", "renameat2", "link", "linkat"):
                src, dst = _names(op)
                save.renames.append([src, dst])
            elif op.call in ("unlink", "unlinkat"):
                save.removes.append(_names(op)[-1])


def _note_what_saves_left(saves: list[SaveRecord], groups: list[list[Moment]],
                          moments: list[Moment], end: Moment) -> None:
    """Each save's checkpoint.json as the next call (or the end) found it."""
    later = [m for m in moments if m.how in ("call", "end")]
    for save, group in zip(saves, groups, strict=True):
        after = next((m for m in later if m.position > group[-1].position), end)
        save.checkpoint_text = _text(after)
        save.checkpoint_bytes = len(after.data) if after.data is not None else None
        state = _parse(after)
        if isinstance(state, dict):
            save.pending = state.get("pendingToolUse")


def _cross_check(rec: Recording, call_moments: list[tuple[Moment, Any]],
                 moments: list[Moment], unfollowed: list[Op]) -> list[str]:
    """Where the model disagrees with what the grader read from disk, or could not follow.

    The grader reads checkpoint.json once a call's frame has arrived, a little after the trace
    marks it: another thread or process of the submission may have changed the file in between,
    until the calling thread's next call (which waits for this call's answer); the calls of
    other threads, in flight at the same time, bound nothing. A call agrees when any state in
    that window is what the grader read.
    """
    end = moments[-1]
    discrepancies = []
    settled = [m for m in moments if m.how in ("call", "before", "end")]
    place = {id(m): i for i, m in enumerate(settled)}
    for moment, call in call_moments:
        if not any(_agrees(m, call.reading) for m in _window(settled, place[id(moment)])):
            discrepancies.append(
                f"when {call.op} call {call.index} came in, checkpoint.json on disk "
                f"({_reading_words(call.reading)}) was not what your recorded file operations "
                f"leave ({_moment_words(moment)})")
            break
    if rec.final is not None and rec.ended in ("finished", "raised") and not _agrees(
            end, rec.final):
        discrepancies.append(
            f"at the end checkpoint.json on disk ({_reading_words(rec.final)}) was not what your "
            f"recorded file operations leave ({_moment_words(end)})")
    if unfollowed:
        discrepancies.append(
            f"{len(unfollowed)} write(s) copied bytes the grader could not follow "
            f"({unfollowed[0].call})")
    return discrepancies


def _window(settled: list[Moment], start: int) -> list[Moment]:
    """The states from the call at ``settled[start]`` to the same thread's next call marker
    (any thread's, where the trace names none), or the end."""
    thread = settled[start].op.pid if settled[start].op is not None else None
    window = [settled[start]]
    for i in range(start + 1, len(settled)):
        moment = settled[i]
        window.append(moment)
        if moment.how == "end" or (moment.how == "call" and (
                thread is None or moment.op is None or moment.op.pid == thread)):
            break
    return window


def _points(rec, scenario, call_moments, saves, groups, end) -> list[PointMoments]:
    trace = [s.summary() for s in saves]
    found: list[tuple[int, PointMoments]] = []
    for moment, call in call_moments:
        if call.op == "model":
            point = CrashPoint(f"killed_during_model_call_{call.index}",
                               "killed_during_model_call", call.index,
                               f"while model call {call.index} was in flight")
        else:
            name = f" ({call.name})" if isinstance(call.name, str) else ""
            point = CrashPoint(f"killed_during_tool_{call.index}", "killed_during_tool",
                               call.index, f"while tool {call.index}{name} ran")
        found.append((moment.position, PointMoments(point, [moment])))
    for save, group in zip(saves, groups, strict=True):
        torn = [m for m in group if not (m.how == "before" and m.op is not None
                                         and m.op.call in BINDING)]
        before = [m for m in group if m.how == "before" and m.op is not None
                  and m.op.call in BINDING]
        summary = save.summary()
        where = save.where
        if torn:
            size = next((m.write["bytes"] for m in torn if m.write), None)
            point = CrashPoint(f"torn_write_save_{save.n}", "torn_write", save.n,
                               save_label(save.n, f"({where})"), save=summary,
                               after=save.checkpoint_text, tear_expected=size)
            found.append((group[0].position, PointMoments(point, torn)))
        if before:
            point = CrashPoint(f"killed_before_rename_save_{save.n}", "killed_before_rename",
                               save.n, rename_label(save.n, f"({where})"),
                               save=summary, after=save.checkpoint_text)
            found.append((before[0].position, PointMoments(point, before)))
    found.sort(key=lambda item: item[0])
    ordered = [pm for _, pm in found]
    ordered.append(PointMoments(CrashPoint(NO_CRASH, NO_CRASH, None, "with no crash"), [end]))
    befores: dict[int, str | None] = {}
    previous = None
    for save in saves:
        befores[save.n] = previous
        if save.checkpoint_text is not None:
            previous = save.checkpoint_text
    for step, pm in enumerate(ordered):
        pm.point.step = step
        pm.point.trace = trace
        if pm.point.kind in ("torn_write", "killed_before_rename"):
            pm.point.before = befores.get(pm.point.index)
        if pm.point.kind == "torn_write":
            _name_the_tear(pm, saves)
    return ordered


def tearing_moment(pm: PointMoments, saves: list[SaveRecord]) -> Moment:
    """The moment a real torn write of ``pm``'s save leaves
    (:func:`graders.judge.crash_points.tear_limit`): in the first write that changes
    ``checkpoint.json``, cut where the forking harness's file-size limit cuts it; else the
    middle of the first write; else the first moment. The crash point's label names it, a
    self-check's kill at this point leaves it, and a check that fails here reports it first."""
    moments = pm.moments
    during = [m for m in moments if m.how == "during"]
    if not during:
        return moments[0]
    before = {m.position: m for m in moments if m.how == "before"}
    changing = [m for m in during if before.get(m.position) is None
                or (m.kind, m.data) != (before[m.position].kind, before[m.position].data)]
    position = (changing or during)[0].position
    cuts = [m for m in during if m.position == position]
    expected = (cuts[0].write or {}).get("bytes")
    previous = None
    for save in saves:
        if pm.point.index is not None and save.n >= pm.point.index:
            break
        if save.completed:
            previous = save.checkpoint_text
    limit = (tear_limit("checkpoint" if changing else "temp", expected, previous)
             if expected else None)
    half = max(1, (expected or 2) // 2)
    for wanted in (limit, half):
        for moment in cuts:
            if (moment.write or {}).get("kept") == wanted:
                return moment
    return cuts[0]


def _name_the_tear(pm: PointMoments, saves: list[SaveRecord]) -> None:
    """Label a torn-write crash point by the cut a real kill makes ("after 936 of 1,873 bytes
    of a write in save 1 (...)"), as the forking harness's list does, and put that moment
    first, so that the list, a kill at the point and the check's message tell one story."""
    moment = tearing_moment(pm, saves)
    if moment.how != "during" or not moment.write:
        return
    pm.point.label = _label(pm.point, moment)
    pm.point.tear_limit = moment.write["kept"]
    pm.moments = [moment, *(m for m in pm.moments if m is not moment)]


def _relative(path: bytes | str) -> str:
    text = path.decode("utf-8", "surrogateescape") if isinstance(path, bytes) else path
    return text[len("/work/"):] if text.startswith("/work/") else text


def _names(op: Op) -> list[str]:
    strings = [a for a in op.args if isinstance(a, bytes)]
    return [_relative(s) if s.startswith(b"/work/") else s.decode("utf-8", "surrogateescape")
            for s in strings]


def _text(moment: Moment) -> str | None:
    if moment.kind != "file" or moment.data is None:
        return None
    return moment.data.decode("utf-8", "surrogateescape")


def _parse(moment: Moment) -> Any:
    if moment.kind != "file" or moment.data is None:
        return None
    try:
        return json.loads(moment.data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None


def _agrees(moment: Moment, reading: Reading | None) -> bool:
    if reading is None or reading.kind in ("unreadable", "too_big"):
        return True
    if reading.kind == "file":
        return moment.kind == "file" and moment.data is not None and reading.same_bytes(moment.data)
    return moment.kind == reading.kind or (reading.kind == "special" and moment.kind == "special")


def _reading_words(reading: Reading) -> str:
    if reading.kind == "file":
        size = len(reading.data) if reading.data is not None else reading.size
        return f"{size or 0:,} bytes"
    return {"absent": "no file"}.get(reading.kind, f"a {reading.kind}")


def _moment_words(moment: Moment) -> str:
    if moment.kind == "file":
        return f"{len(moment.data or b''):,} bytes"
    return {"absent": "no file"}.get(moment.kind, moment.kind)


def _observation(matrix: Matrix, pm: PointMoments, moment: Moment) -> Observation:
    rec = matrix.recording
    point = pm.point
    if point.kind == NO_CRASH:
        ended = rec.ended or "died"
        detail = rec.detail or {"finished": "run_agent returned",
                                "raised": "raised an exception"}.get(ended, "")
    else:
        ended, detail = "killed", f"killed {point.label}"
    obs = Observation(scenario=rec.scenario or "", point=point.id, kind=point.kind, ended=ended,
                      detail=detail, error=rec.error if point.kind == NO_CRASH else None,
                      elapsed=rec.elapsed, exit_code=rec.exit_code)
    if ended == "raised" and rec.error:
        obs.detail = f"raised {describe_error(rec.error)}"
    obs.files = dict(moment.listing)
    obs.elsewhere = list(moment.elsewhere)
    if moment.kind == "file":
        obs.checkpoint = moment.data.decode("utf-8", "surrogateescape")
        obs.checkpoint_bytes = len(moment.data)
        try:
            json.loads(moment.data.decode("utf-8"))
        except UnicodeDecodeError as err:
            obs.parse_error = f"is not UTF-8 text (byte {err.start})"
        except ValueError as err:
            obs.parse_error = f"is not valid JSON ({err})"
    elif moment.kind != "absent":
        obs.checkpoint = ""
        obs.checkpoint_bytes = 0
        obs.parse_error = moment.unfollowed or _KIND_WORDS.get(
            moment.kind, f"is a {moment.kind}, not a file")
    obs.ledger, obs.model_calls, obs.tool_calls = _ledger(matrix, moment)
    obs.saves = [s for s in matrix.saves]
    obs.stdout_tail, obs.stderr_tail = rec.stdout_tail, rec.stderr_tail
    obs.run_problems = [{"problem": code, "message": text} for code, text in
                        run_problems(rec, matrix.discrepancies, matrix.channel)]
    if moment.how == "during" and moment.write:
        obs.torn = {"path": "checkpoint.json", "limit": moment.write["kept"],
                    "bytes_on_disk": obs.checkpoint_bytes,
                    "bytes_expected": moment.write["bytes"]}
    obs.events = [{"e": "moment", "how": moment.how, "position": moment.position,
                   "what": _describe_write(moment)}]
    return obs


def _ledger(matrix: Matrix, moment: Moment) -> tuple[list[dict], int, int]:
    """(the tool executions, model calls, tool calls) the grader had served at ``moment``; a
    call in flight there is in the ledger without its result."""
    position = moment.position
    in_flight = moment.op if moment.how == "call" else None
    ledger = []
    models = tools = 0
    marker_pos = matrix.marker_positions()
    for call in matrix.recording.calls:
        at = marker_pos.get(call.seq)
        if at is None or at > position or (at == position and in_flight is None):
            continue
        if call.op == "model":
            models += 1
            continue
        tools += 1
        entry: dict[str, Any] = {"index": call.index, "name": call.name, "input": call.input,
                                 "thread": matrix.ops[at].pid}
        if call.error is not None:
            entry["error"] = call.error
        elif not (in_flight is not None and at == position):
            entry["result"] = call.result
        ledger.append(entry)
    return ledger, models, tools


# -- verdicts --------------------------------------------------------------------------------------


#: The problem code of a run that cost the grader more than one run may.
OVER_BUDGET = "over_budget"


def over_budget_verdict(scenario: str, message: str) -> Verdict:
    """The single verdict of a run that cost the grader more than one run may."""
    return Verdict(scenario, LOAD_POINT, LOAD_POINT, False, message,
                   {"problem": OVER_BUDGET, "problems": [OVER_BUDGET]})


def load_message(rec: Recording) -> str | None:
    """Why the submission could not even be loaded, or its run not graded (a student
    message), or None."""
    if rec.over_budget:
        return over_budget_message(rec.over_budget)
    if rec.ended != "not_loaded":
        if rec.ended in ("hung", "died") and not rec.loaded:
            return (load_errors.hung_while_loading() if rec.ended == "hung"
                    else load_errors.died_while_loading())
        return None
    load = rec.load or {}
    if load.get("missing"):
        return load_errors.missing(load["missing"])
    error = load.get("error") or {}
    if error.get("type") == "SystemExit":
        return load_errors.exit_while_loading()
    return load_errors.raised_while_loading(error)


def _label(point, moment) -> str:
    """The crash point's label, made exact for one moment inside a save ("after 1 of 2,913
    bytes of a write in save 2 (...)", "just before a rename in save 2 (...)")."""
    if point.kind not in ("torn_write", "killed_before_rename") or moment.op is None:
        return point.label
    label = point.label
    where = label[label.find("("):label.rfind(")") + 1] if "(" in label else ""
    return in_save(moment_words(moment), point.index, where)


def judge(rec: Recording, scenario, kinds=None, *,
          rules=check) -> tuple[list[Verdict], Matrix | None]:
    """Check every moment of every crash point of ``rec`` (of ``kinds``, if given).

    Returns the verdicts in timeline order (a crash point fails at its first moment that fails)
    and the matrix they came from (None when the submission could not be loaded). ``rules``
    judge one moment: ``rules(observation, scenario, crash_point) -> Verdict`` (by default
    :func:`graders.judge.checkpoint_rules.check`; an exercise with other rules, such as several tool
    calls in one turn, passes its own).
    """
    if rec.over_budget:
        return [over_budget_verdict(scenario.name, load_message(rec))], None
    problem = load_message(rec)
    if problem:
        return [load_error_verdict(scenario.name, problem)], None
    try:
        matrix = build_matrix(rec, scenario)
    except OverBudget as exc:
        return [over_budget_verdict(scenario.name, str(exc))], None
    new_run(scenario)
    verdicts = []
    for pm in matrix.points:
        if kinds is not None and pm.point.kind not in kinds and pm.point.kind != NO_CRASH:
            continue
        chosen = None
        checked = 0
        seen: set = set()
        for moment in pm.moments:
            # inside one crash point the calls are the same: one disk state, one verdict
            disk = (moment.kind, moment.data)
            if disk in seen:
                continue
            seen.add(disk)
            point = dataclasses.replace(pm.point, label=_label(pm.point, moment))
            verdict = rules(matrix.observation(pm, moment), scenario, point)
            checked += 1
            if chosen is None or (chosen.passed and not verdict.passed):
                chosen = verdict
                if not verdict.passed:
                    break
        chosen.evidence["moments_checked"] = checked
        chosen.evidence["moments"] = len(pm.moments)
        verdicts.append(chosen)
    final = verdicts[-1]
    problems = run_problems(rec, matrix.discrepancies, matrix.channel)
    if problems:
        final.passed = False
        keys = [k for k, _ in problems]
        final.evidence["problems"] = keys + list(final.evidence.get("problems") or [])
        final.evidence["problem"] = keys[0]
        final.message = " ".join(text for _, text in problems) + (
            f" Also: {final.message}" if final.message else "")
    return verdicts, matrix
