"""What one sandboxed, traced run of a submission left for the judge: plain data.

The sandbox side fills a :class:`Recording`; the judge reads it. Every fact in it comes from the
grading process (its log of the calls it answered, what it read from disk, the trace strace
wrote), never from the submission's own account of itself.

What one crash run left behind, as the judge reads it: an :class:`Observation` and its
:class:`SaveRecord` of each save.

The judge builds observations from a recording (:mod:`graders.judge.matrix`); the forking
harness reads them from a child's files (:func:`graders.inprocess.collect.collect`). Nothing
here reads a file or runs student code.

The verdict: what the judge concludes for one scenario and crash point.

The judge's problem codes, with what each means: graders key partial credit on them, so keep
the codes stable.

:data:`PROBLEMS` are the codes of the rules for one tool call per turn (Levels 1 and 2,
:mod:`graders.judge.checkpoint_rules`); the rules for several tool calls in one turn (Level 4,
:mod:`graders.judge.parallel_rules`) keep most of them and add three groups, one per question a
check asks (:data:`IN_FLIGHT_PROBLEMS`, :data:`KEPT_PROBLEMS`, :data:`MESSAGE_PROBLEMS`), all in
:data:`PARALLEL_PROBLEMS`.

What is wrong with a run as a whole, whatever any crash state holds: file operations the
grader could not follow, and a channel the submission wrote to itself.

Both are the submission's doing; the judge fails the run's end with them (every check), and an
observation carries them (``Observation.run_problems``) for a check that reads observations.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from typing import Any

from graders.loop.protocol import CHECKPOINT

__all__ = ["Recording", "Call", "Reading", "Observation", "SaveRecord", "Verdict", "LOAD_POINT",
           "PROBLEMS", "IN_FLIGHT_PROBLEMS", "KEPT_PROBLEMS", "MESSAGE_PROBLEMS",
           "PARALLEL_PROBLEMS", "UNOBSERVED", "CHANNEL", "run_problems"]


# -- recording -------------------------------------------------------------------------------------


@dataclass
class Reading:
    """A reading: ``checkpoint.json`` as the grading process read it from outside the run, at
    one call or at the end.

    ``kind`` is ``"file"``, ``"absent"``, ``"fifo"``, ``"symlink"``, ``"directory"``,
    ``"special"``, ``"too_big"`` or ``"unreadable"``. For a file, ``digest`` is the SHA-256 of its
    bytes and ``size`` their count; ``data`` holds the bytes themselves only where the judge
    needs them (a run keeps few: a checkpoint may be megabytes, and a run may make hundreds of
    calls). ``listing`` is the other entries of the working directory (name -> size, ``"dir/"``
    for folders).
    """

    kind: str
    data: bytes | None = None
    size: int | None = None
    detail: str = ""
    listing: dict[str, Any] = field(default_factory=dict)
    digest: str | None = None

    def same_bytes(self, data: bytes) -> bool:
        """Whether this file held exactly ``data``."""
        if self.data is not None:
            return self.data == data
        return self.digest is not None and self.digest == hashlib.sha256(data).hexdigest()

    def forget_bytes(self) -> Reading:
        """This reading keeping only the digest and size of a file's bytes."""
        if self.data is not None:
            self.digest = hashlib.sha256(self.data).hexdigest()
            self.size = len(self.data)
            self.data = None
        return self


@dataclass
class Call:
    """One ``call_model`` or ``execute_tool`` the grading process answered.

    ``index`` counts calls of its kind from 1; ``seq`` is the number the grading process gave
    the call's frame, in the order frames arrived (never a number the submission chose): the
    trace marker of that very frame places the call among the file operations. ``reading`` is
    ``checkpoint.json`` as read when the call arrived.
    """

    seq: int
    op: str
    index: int
    reading: Reading | None = None
    name: str | None = None
    input: Any = None
    result: str | None = None
    error: str | None = None
    stop_reason: str | None = None


@dataclass
class Recording:
    """One run: how it ended, the calls, the save markers, the trace, the outputs.

    ``ended`` is ``"finished"`` (run_agent returned), ``"raised"`` (see ``error``),
    ``"not_loaded"`` (see ``load``), ``"hung"``, or ``"died"`` (see ``detail``). ``tier`` names
    the sandbox it ran in (``"bubblewrap"``, ``"uid"``, or ``"none"`` for trusted code).

    ``frames`` is every frame the grading process received, in order: ``{"seq", "op",
    "header"}`` (the header as the submission wrote it, which its trace marker must show);
    ``markers`` the save markers among them. ``ops`` is the run's file operations when the
    observer recorded them itself (else the judge parses ``trace``). ``over_budget`` says why
    the run cost the grading process more than one run may (empty: it did not); ``trace_lost``
    why the grader lost part of its own record (empty: it did not). ``filled`` is set on a run
    whose disk was filled on purpose: ``{"seq", "limit", "error"}``.
    """

    scenario: str | None
    mode: str
    sandboxed: bool
    ended: str | None = None
    detail: str = ""
    error: dict | None = None
    load: dict | None = None
    loaded: bool = False
    described: dict | None = None
    calls: list[Call] = field(default_factory=list)
    markers: list[dict] = field(default_factory=list)
    final: Reading | None = None
    protocol: list[str] = field(default_factory=list)
    trace: str = ""
    ops: list | None = None
    frames: list[dict] = field(default_factory=list)
    over_budget: str = ""
    trace_lost: str = ""
    filled: dict | None = None
    socket_inode: int | None = None
    stdout_tail: str = ""
    stderr_tail: str = ""
    elapsed: float = 0.0
    exit_code: int | None = None
    kept: str | None = None
    tier: str = ""


# -- observation -----------------------------------------------------------------------------------


@dataclass
class SaveRecord:
    """One save (one call of ``save_checkpoint``), as the run's events describe it.

    ``phase`` is where in the loop it happened: ``"A"`` (after the model named tool ``tool``,
    before it ran), ``"B"`` (after tool ``tool`` returned), ``"start"`` (before the first model
    call) or ``"end"`` (after the final answer). ``pending`` is the ``pendingToolUse`` of the
    state it was given. ``opened``, ``renames`` and ``removes`` are the file operations it made
    (names relative to the working directory). ``checkpoint_text`` is ``checkpoint.json`` as the
    save left it (dry run only). ``thread`` is the thread (or process) that began it, as the
    recording numbers them; None where unknown.
    """

    n: int
    phase: str
    tool: int | None
    pending: Any = None
    completed: bool = False
    raised: str | None = None
    thread: int | None = None
    opened: list[str] = field(default_factory=list)
    renames: list[list[str | None]] = field(default_factory=list)
    removes: list[str] = field(default_factory=list)
    sizes: dict[str, int | None] = field(default_factory=dict)
    checkpoint_text: str | None = None
    checkpoint_bytes: int | None = None

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
        """This record without the checkpoint text."""
        data = asdict(self)
        data.pop("checkpoint_text")
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
        run_problems: what is wrong with the run as a whole, whatever this state holds (file
            operations the grader could not follow, a channel the code wrote to itself):
            ``{"problem", "message"}`` each (:mod:`graders.judge.recording`).
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
    run_problems: list[dict[str, str]] = field(default_factory=list)

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


# -- verdict ---------------------------------------------------------------------------------------


#: The ``point`` of the single verdict given when a submission cannot even be loaded.
LOAD_POINT = "load"


@dataclass
class Verdict:
    """One verdict, as plain data.

    Attributes:
        scenario: the scenario name, e.g. ``"support-tickets"``.
        point: the crash point id, e.g. ``"killed_during_tool_2"`` (``"load"`` when the
            submission could not be loaded at all).
        kind: the crash point's kind, e.g. ``"killed_during_tool"``.
        passed: whether the checkpoint on disk was what resume needs at that point.
        message: what was done, what was on disk, what was expected, and what resume would run
            into, in the lesson's words.
        evidence: the facts behind the message (bytes on disk, expected bytes, the ledger, ...).
        skipped: the point could not be run here (for instance, on a platform without fork).
    """

    scenario: str
    point: str
    kind: str
    passed: bool
    message: str
    evidence: dict[str, Any] = field(default_factory=dict)
    skipped: bool = False

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able dict (``json.dumps`` works on it)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Verdict:
        """The verdict ``to_dict`` described."""
        return cls(
            scenario=data["scenario"],
            point=data["point"],
            kind=data["kind"],
            passed=bool(data["passed"]),
            message=data["message"],
            evidence=dict(data.get("evidence") or {}),
            skipped=bool(data.get("skipped", False)),
        )

    def __str__(self) -> str:
        mark = "skipped" if self.skipped else ("passed" if self.passed else "FAILED")
        return f"{self.scenario} / {self.point}: {mark}. {self.message}"


# -- problems --------------------------------------------------------------------------------------


#: Every problem code a verdict's ``evidence["problem"]`` / ``evidence["problems"]`` may hold.
#: Graders key partial credit on them: keep the codes stable.
PROBLEMS: dict[str, str] = {
    # how the run ended
    "not_loaded": "the submission could not be loaded (syntax error, top-level error, ...)",
    "skipped": "the crash harness cannot run on this platform",
    "hung": "the run was still going after the timeout",
    "raised": "the submission raised an exception before the crash point",
    "died": "the run ended itself (os._exit, a signal, a killed runner)",
    "not_reached": "the run finished without reaching a crash point the dry run reached",
    "harness_error": "the harness itself failed (a bug in Checkpoint Lab)",
    "tear_not_applied": "a save wrote all its bytes under the file-size limit: no tear happened",
    # the write
    "in_place_write": "a torn write of checkpoint.json itself: half a file on disk",
    "copy_over": "the temp file was copied over checkpoint.json, and the copy was torn",
    "partial_write": "a short write to the temp file, renamed over checkpoint.json anyway",
    "unobserved_write": "a file operation the grader could not follow: the state is unknown",
    "invalid_json": "checkpoint.json is not valid JSON",
    "not_a_save": "after a torn write or rename kill, the file is neither save n-1 nor save n",
    "deleted_before_rename": "checkpoint.json deleted before the temp file was renamed over it",
    "never_renamed": "the temp file is never renamed, so checkpoint.json never exists",
    "wrong_place": "checkpoint.json written somewhere other than the working directory",
    "no_checkpoint": "a finished run left no checkpoint.json",
    "no_saves": "run_agent never called save_checkpoint",
    # the fields
    "bad_field": "a field has the wrong type, or the file is not a JSON object",
    "missing_fields": "some of the six fields are missing",
    "version": "a version other than 1",
    "task": "task is not the run's task",
    "turns": "turns differs from the tool results recorded",
    # save point A and pendingToolUse
    "no_save_point_a": "a tool ran and left no trace: no save before it ran",
    "save_point_a_after_tool": "pendingToolUse is saved only after the tool ran",
    "pending_without_input": "pendingToolUse lacks input",
    "pending_incomplete": "pendingToolUse lacks id or name",
    "pending_never_reset": "pendingToolUse names a call whose result is recorded",
    "pending_mismatch": "pendingToolUse is not the call the model named",
    "pending_before_message": "pendingToolUse set, but the assistant message naming it is absent",
    "pending_missing": "messages end with a tool request but pendingToolUse is null",
    # save point B and messages
    "no_save_point_b": "a tool returned and the model was called again, result not saved",
    "recorded_twice": "a tool result appears twice in messages",
    "never_ran": "messages record a result for a tool that never ran",
    "result_not_returned": "messages record a result for a tool that had not returned yet",
    "conversation": "messages is not a conversation the Messages API accepts",
    "script_mismatch": "messages departs from what the model and tools produced",
    "incomplete": "a finished run's checkpoint lacks some tool results",
}

#: No call in flight without a trace: save point A lists every call of the turn.
IN_FLIGHT_PROBLEMS: dict[str, str] = {
    "no_save_point_a": "a tool ran and left no trace: no save listed it before it ran",
    "save_point_a_after_tool": "a call is listed in pendingToolUse only after the tool ran",
    "pending_not_list": "pendingToolUse is one call (a dict), not a list of the turn's calls",
    "pending_empty": "pendingToolUse is an empty list: nothing pending is None",
    "pending_entry_invalid": "an entry of pendingToolUse lacks id, name or input, or its result "
                             "is not a string",
    "pending_missing_calls": "pendingToolUse lists only some of the turn's calls",
    "pending_mismatch": "pendingToolUse is not the calls the model named, in block order",
    "pending_never_reset": "pendingToolUse names a call whose result is recorded in messages",
    "pending_before_message": "pendingToolUse set, but the assistant message naming it is absent",
    "pending_missing": "messages end with a tool request but pendingToolUse is null",
}
#: No finished call lost: a call that returned is kept with its result until save point B.
KEPT_PROBLEMS: dict[str, str] = {
    "result_lost": "a call had returned, and checkpoint.json holds its result nowhere",
    "result_changed": "a result kept in pendingToolUse is not what the tool returned",
    "result_never_ran": "pendingToolUse keeps a result for a call that never ran",
    "result_not_returned": "a result is on record for a call that had not returned yet",
}
#: One user message with every result (in any order); the conversation valid for the API.
MESSAGE_PROBLEMS: dict[str, str] = {
    "results_split": "the results of one turn are spread over several user messages",
    "partial_result_message": "messages end with a user message that answers only some calls",
    "no_save_point_b": "tools returned and the model was called again, results not saved",
    "recorded_twice": "a tool result appears twice in messages",
    "never_ran": "messages record a result for a tool that never ran",
    "conversation": "messages is not a conversation the Messages API accepts",
    "script_mismatch": "messages departs from what the model and tools produced",
    "turns": "turns differs from the turns whose results are recorded",
    "incomplete": "a finished run's checkpoint lacks some tool results",
}
#: Every problem code a Level 4 verdict's ``evidence["problem"]`` / ``["problems"]`` may hold:
#: Level 2's (how the run ended, how a save writes, the fields) and the three groups above.
PARALLEL_PROBLEMS: dict[str, str] = {
    **{k: v for k, v in PROBLEMS.items()
       if k not in ("pending_without_input", "pending_incomplete")},
    **IN_FLIGHT_PROBLEMS, **KEPT_PROBLEMS, **MESSAGE_PROBLEMS,
}


# -- run problems ----------------------------------------------------------------------------------


#: Problem codes of the traced grader, beside the judge's own
#: (graders.judge.recording.PROBLEMS).
UNOBSERVED = "unobserved_write"
CHANNEL = "grader_channel"


def run_problems(rec: Recording, discrepancies: list[str],
                 channel: list[str]) -> list[tuple[str, str]]:
    """``(problem code, message)`` for each thing wrong with the run ``rec`` as a whole."""
    problems = []
    if discrepancies:
        problems.append((UNOBSERVED, (
            "Your code changed checkpoint.json in a way the grader could not follow: "
            f"{discrepancies[0]}. The grader checks every state a crash could leave by "
            "replaying your file operations, so it needs them to be ordinary file operations "
            "(open, write, rename, ...), made while the loop runs.")))
    if rec.protocol:
        problems.append((CHANNEL, (
            f"Your code wrote {rec.protocol[0]} to the grader's own channel (the socket behind "
            "call_model and execute_tool). Only call the two functions; the channel is not "
            "yours to write.")))
    elif channel:
        problems.append((CHANNEL, (
            f"On the grader's own channel (the socket behind call_model and execute_tool), "
            f"{channel[0]}: the grader places each call among your file operations by the "
            "record of its sending, so it cannot judge a crash around that call. Only call the "
            "two functions; the channel is not yours to write.")))
    return problems
