"""What one crash run left behind, as the judge reads it: an :class:`Observation` and its
:class:`SaveRecord` of each save.

The judge builds observations from a recording (:mod:`graders.judge.matrix`); the forking
harness reads them from a child's files (:func:`graders.inprocess.collect.collect`). Nothing
here reads a file or runs student code.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from graders.loop.protocol import CHECKPOINT

__all__ = ["Observation", "SaveRecord", "describe_error"]


@dataclass
class SaveRecord:
    """One save (one call of ``save_checkpoint``), as the run's events describe it.

    ``phase`` is where in the loop it happened: ``"A"`` (after the model named tool ``tool``,
    before it ran), ``"B"`` (after tool ``tool`` returned), ``"start"`` (before the first model
    call) or ``"end"`` (after the final answer). ``pending`` is the ``pendingToolUse`` of the
    state it was given. ``opened``, ``renames`` and ``removes`` are the file operations it made
    (names relative to the working directory). ``snapshot`` is ``checkpoint.json`` as the save left
    it (dry run only). ``thread`` is the thread (or process) that began it, as the recording
    numbers them; None where unknown.
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
        run_problems: what is wrong with the run as a whole, whatever this state holds (file
            operations the grader could not follow, a channel the code wrote to itself):
            ``{"problem", "message"}`` each (:mod:`graders.judge.run_problems`).
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


def describe_error(error: dict[str, Any] | None) -> str:
    """``ValueError: bad (line 12 of your code: `x = y`)`` for an exception summary (``where``,
    when the error has it, names the part of the submission instead of "your code")."""
    if not error:
        return "an error"
    text = error.get("type", "Exception")
    if error.get("message"):
        text += f": {error['message']}"
    if error.get("line"):
        where = f"line {error['line']} of {error.get('where') or 'your code'}"
        if error.get("code"):
            where += f": `{error['code']}`"
        text += f" ({where})"
    return text
