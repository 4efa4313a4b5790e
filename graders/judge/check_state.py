"""What one check of a crash state holds and reads: the observation, the scenario's script, the
problems found so far, and the verdict they make.

Shared by the rules for one call per turn (:mod:`graders.judge.checkpoint_rules`) and for
several calls in one turn (:mod:`graders.judge.parallel_rules`); the rules that read the disk
are :class:`graders.judge.crash_check.CrashCheck`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

from graders.judge.crash_points import NO_CRASH, CrashPoint
from graders.judge.recording import LOAD_POINT, Observation, Verdict
from graders.text import plural

__all__ = ["CheckState", "WRITE_KINDS", "FIELD_TYPES", "canonical", "byte_count", "type_words",
           "script_of", "load_error_verdict", "skipped_verdict", "results_in_save",
           "not_returned_message", "new_run"]

#: The crash point kinds in the middle of a save: judged only for what the save left (one
#: complete save, or none yet); where tools ran is judged at the calls (each check its own).
WRITE_KINDS = ("torn_write", "killed_before_rename")

#: The type each of the five fields other than pendingToolUse must have.
FIELD_TYPES = {"version": int, "task": str, "turns": int, "tokensUsed": (int, float),
               "messages": list}


def load_error_verdict(scenario: str, message: str) -> Verdict:
    """The single verdict of a submission that could not be loaded."""
    return Verdict(scenario, LOAD_POINT, LOAD_POINT, False, message,
                   {"problem": "not_loaded", "problems": ["not_loaded"]})


def skipped_verdict(scenario: str, reason: str, point: str = NO_CRASH,
                    kind: str = NO_CRASH) -> Verdict:
    """A verdict for a point that could not be run on this platform."""
    return Verdict(scenario, point, kind, False, reason, {"problem": "skipped"}, skipped=True)


def byte_count(n: int | None) -> str:
    """``n`` with thousands separators, ``"?"`` when unknown."""
    return "?" if n is None else f"{n:,}"


def canonical(value: Any) -> str:
    """One text for equal JSON values (keys sorted), to compare them."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=repr)


def type_words(kind) -> str:
    """A type (or tuple of types) of ``FIELD_TYPES`` in words: ``"an integer"``."""
    kinds = kind if isinstance(kind, tuple) else (kind,)
    names = {int: "an integer", str: "a string", list: "a list", float: "a number"}
    return " or ".join(names.get(k, k.__name__) for k in kinds)


def results_in_save(save: Any) -> tuple[dict[str, Any], set[str]]:
    """What one save left on disk of the tools' results: (call id -> result kept in
    pendingToolUse, ids answered in messages). From the file the save left when the recording
    has it, else from the state it was given."""
    state: Any = None
    text = getattr(save, "checkpoint_text", None)
    if isinstance(text, str):
        try:
            state = json.loads(text)
        except ValueError:
            state = None
    if not isinstance(state, dict):
        state = {"pendingToolUse": getattr(save, "pending", None), "messages": []}
    pending = state.get("pendingToolUse")
    entries = pending if isinstance(pending, list) else [pending]
    kept = {e["id"]: e["result"] for e in entries
            if isinstance(e, dict) and isinstance(e.get("id"), str) and "result" in e}
    answered: set[str] = set()
    messages = state.get("messages")
    for message in messages if isinstance(messages, list) else []:
        content = message.get("content") if isinstance(message, dict) else None
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result" \
                    and isinstance(block.get("tool_use_id"), str):
                answered.add(block["tool_use_id"])
    return kept, answered


def not_returned_message(check: CheckState, k: int, claim: str) -> str:
    """The message for a result on record for tool ``k`` while it had not returned yet (16.7a):
    ``claim`` says where (``"messages record"``, ``"pendingToolUse keeps"``)."""
    name = check.calls[k - 1]["name"] if k <= len(check.calls) else "?"
    return (f"{check.done}: {claim} a result for tool {k} ({name}), but tool {k} had not "
            "returned yet at that moment. A checkpoint records what has happened, nothing "
            "ahead of it: resume would hand the model a result the tool had not given, and "
            "never know the call was still under way.")


_SCRIPTS: dict[int, tuple[Any, dict]] = {}


def script_of(scenario) -> dict:
    """The scenario's calls, tools and conversation, copied once (the judge only reads them),
    each message of the conversation in its one canonical text (compared with every crash
    state's messages), and ``memo``: what :meth:`CheckState.once` worked out for each distinct
    checkpoint.json."""
    held = _SCRIPTS.get(id(scenario))
    if held is None or held[0] is not scenario:
        from fake_llm.normalize import canonical_message

        conversation = scenario.conversation()
        held = (scenario, {"calls": scenario.tool_calls, "tools": scenario.tools,
                           "conversation": conversation,
                           "canonical": [canonical_message(m) for m in conversation],
                           "memo": {}})
        if len(_SCRIPTS) > 16:
            _SCRIPTS.clear()
        _SCRIPTS[id(scenario)] = held
    return held[1]


def new_run(scenario) -> None:
    """Forget what :meth:`CheckState.once` worked out: a new run's states are judged from here
    (each run's own cost, as when it is the only one graded)."""
    script_of(scenario)["memo"].clear()


class CheckState:
    """One check of one crash state: what it reads, what it found, the verdict it gives.

    A subclass says what was on disk (:meth:`describe_disk`) and which save first named a call
    too late (:meth:`a_save_after_tool`), in the words of its own checkpoint shape.
    """

    def __init__(self, obs: Observation, scenario, point: CrashPoint) -> None:
        self.obs = obs
        self.sc = scenario
        self.point = point
        self.calls = script_of(scenario)["calls"]
        self.problems: list[tuple[str, str]] = []
        self.notes: list[str] = []
        self.advice: list[str] = []
        self.evidence: dict[str, Any] = {"ended": obs.ended, "detail": obs.detail}
        self.state: Any = None
        self.same: str | None = None  # which complete save a torn write or rename kill left
        self.recorded: list[str] = []  # tool_use ids answered in messages, in order

    # -- what the subclass says in its own words ---------------------------------------------

    def describe_disk(self) -> str:
        """What checkpoint.json held: its turn and pendingToolUse (and which save it was)."""
        raise NotImplementedError

    def a_save_after_tool(self, k: int) -> dict | None:
        """A save of the first run placed after tool ``k`` returned that names it pending."""
        raise NotImplementedError

    # -- helpers ---------------------------------------------------------------------------

    def fail(self, key: str, text: str) -> None:
        """Note the problem ``key``, with the message a student reads."""
        self.problems.append((key, text))

    @property
    def done(self) -> str:
        """What was done to the run, as a message begins: "Killed while tool 2 ran"."""
        if self.point.kind == NO_CRASH:
            return "Ran with no crash"
        return f"Killed {self.point.label}"

    def once(self, what: str, messages: Any, work: Callable[[], Any]) -> Any:
        """``work()``, a fact of ``messages`` alone (``what`` names it), worked out once per
        distinct checkpoint.json: a run's crash states leave the same file again and again (a
        third as many files as states in the scenarios). Kept by the file's digest, only when
        ``messages`` is the one this check parsed from it."""
        text, state = self.obs.checkpoint, self.state
        if not isinstance(text, str) or not isinstance(state, dict) or \
                messages is not state.get("messages"):
            return work()
        digest = hashlib.blake2b(text.encode("utf-8", "surrogateescape"), digest_size=20)
        memo = script_of(self.sc)["memo"]
        key = (what, digest.digest())
        if key not in memo:
            if len(memo) > 512:
                memo.clear()
            memo[key] = work()
        return memo[key]

    def call_number(self, call_id: Any) -> int | None:
        """The script's number (from 1) of the tool call with id ``call_id``."""
        for i, call in enumerate(self.calls, 1):
            if call["id"] == call_id:
                return i
        return None

    def executions(self) -> list[tuple[int, dict]]:
        """(script call number, ledger entry) of each tool that ran, matched by name and input."""
        pairs = []
        used: set[int] = set()
        for entry in self.obs.ledger:
            if "error" in entry:
                continue  # the fake tool refused the call: nothing happened
            for i, call in enumerate(self.calls, 1):
                if (i not in used and call["name"] == entry.get("name")
                        and canonical(call["input"]) == canonical(entry.get("input"))):
                    pairs.append((i, entry))
                    used.add(i)
                    break
        return pairs

    def ran(self) -> list[int]:
        """Script call numbers of the tools that ran (the ledger)."""
        return [number for number, _ in self.executions()]

    def returned(self) -> list[int]:
        """Call numbers of tools that returned their result to the submission."""
        killed_in = self.point.index if self.point.kind == "killed_during_tool" else None
        return [number for number, entry in self.executions()
                if "result" in entry and entry["index"] != killed_in]

    def saves_around(self) -> tuple[list[Any], list[Any]]:
        """The run's saves placed before this crash point's moment, and after it.

        Placed for a kill while a tool runs (each save by the last call that came before it:
        after tool ``j``'s call means after it in the run) and for the end of a run (every save
        is before it); other points place none.
        """
        point = self.point
        if point.kind == NO_CRASH:
            return list(self.obs.saves), []
        if point.kind != "killed_during_tool" or not isinstance(point.index, int):
            return [], []
        j = point.index
        before, after = [], []
        for save in self.obs.saves:
            phase, tool = getattr(save, "phase", None), getattr(save, "tool", None)
            tool = tool if isinstance(tool, int) else 0
            later = (phase == "B" and tool >= j) or (phase == "A" and tool > j) or phase == "end"
            (after if later else before).append(save)
        return before, after

    def leftovers(self) -> list[str]:
        """The files (not folders) beside checkpoint.json."""
        return [name for name, size in self.obs.files.items() if size != "dir/"]

    def count_results(self, messages: list) -> dict[Any, int]:
        """How often each tool_use id is answered in ``messages``; notes each in ``recorded``."""
        counts: dict[Any, int] = {}
        for message in messages[1:]:
            content = message.get("content") if isinstance(message, dict) else None
            for block in content if isinstance(content, list) else []:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    tid = block.get("tool_use_id")
                    counts[tid] = counts.get(tid, 0) + 1
                    if counts[tid] == 1:
                        self.recorded.append(tid)
        return counts

    # -- the verdict -----------------------------------------------------------------------

    def verdict(self) -> Verdict:
        """The verdict: the first problem (and the second), or what passed; advice after."""
        obs, point = self.obs, self.point
        passed = not self.problems
        if passed:
            message = self.pass_message()
        else:
            message = self.problems[0][1]
            if len(self.problems) > 1:
                message += " Also: " + self.problems[1][1]
        if self.advice and (passed or point.kind == NO_CRASH):
            message += " Advice: " + " ".join(self.advice)
        self.evidence["problem"] = self.problems[0][0] if self.problems else None
        self.evidence["problems"] = [key for key, _ in self.problems]
        self.evidence["advice"] = list(self.advice)
        if obs.torn:
            self.evidence["torn"] = obs.torn
        return Verdict(obs.scenario, obs.point, obs.kind, passed, message, self.evidence)

    def pass_message(self) -> str:
        """What a passed crash state left, and why resume can use it."""
        point = self.point
        notes = list(self.notes)
        if self.state is not None:
            state = self.state
            if point.kind == NO_CRASH:
                return (f"{self.done}: checkpoint.json holds all "
                        f"{plural(len(self.recorded), 'tool result')}, turns "
                        f"{state['turns']} and no pendingToolUse.")
            pending = state["pendingToolUse"]
            disk = self.describe_disk()
            left = ""
            temps = self.leftovers()
            if temps and point.kind in ("torn_write", "killed_before_rename"):
                left = (f" The temp file {temps[0]} it left behind is harmless: resume reads only "
                        "checkpoint.json.")
            if pending is not None:
                return (f"{self.done}: {disk}, so resume can reconcile the call that was in "
                        f"flight.{left}")
            return f"{self.done}: {disk}, with every finished tool call recorded.{left}"
        text = notes[0] if notes else "nothing to check"
        return f"{self.done}: {text}."
