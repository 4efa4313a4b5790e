"""The rules a checkpoint is held to: is what a crash left on disk what resume needs?

One :class:`Verdict` per crash point.

These rules run in the deciding process, on an :class:`~graders.judge.recording.Observation` read
from disk. It holds ``checkpoint.json`` to the protocol (valid JSON, the six fields, ``version``
1, the scenario's task) and to invariants tied to the crash point and to the ledger of what the
tools really did, never to a golden file:

- every tool that ran is recorded with its result in ``messages`` or is the ``pendingToolUse``;
  one that returned before the next model call is recorded; none is recorded twice, none that
  never ran is recorded, and ``pendingToolUse`` never names a call whose result is recorded;
- ``turns`` equals the tool results recorded; ``messages`` is a conversation the API accepts (up
  to the pending call) and the script's own, so far;
- a torn write or a kill before a rename leaves exactly the previous complete save (or the save's
  own, if it completed).
"""


from __future__ import annotations

import json
from typing import Any

from graders.judge.check_state import (
    WRITE_KINDS,
    byte_count,
    canonical,
    load_error_verdict,
    not_returned_message,
    skipped_verdict,
)
from graders.judge.crash_check import CrashCheck
from graders.judge.crash_points import NO_CRASH, CrashPoint
from graders.judge.recording import PROBLEMS, Observation, Verdict
from graders.text import plural

__all__ = ["check", "load_error_verdict", "skipped_verdict", "PROBLEMS", "WRITE_KINDS"]


class _Check(CrashCheck):
    """The rules for one tool call per turn: ``pendingToolUse`` is one ``{id, name, input}``."""

    def a_save_after_tool(self, k: int) -> dict | None:
        """A save of the dry run placed after tool ``k`` returned that marks it pending."""
        call_id = self.calls[k - 1]["id"] if k <= len(self.calls) else None
        for save in self.point.trace or []:
            pending = save.get("pending")
            if (save.get("phase") == "B" and save.get("tool") == k and isinstance(pending, dict)
                    and pending.get("id") == call_id):
                return save
        return None

    def fields(self) -> bool:
        """The six fields' shape, pendingToolUse whole, version 1 and the run's task."""
        return self.shape_is_right() and self.pending_is_whole() and self.identity_is_right()

    def pending_is_whole(self) -> bool:
        """pendingToolUse, if set, is ``{id, name, input}`` (judged at the calls, not mid-save)."""
        state = self.state
        pending = state["pendingToolUse"]
        if pending is not None and self.point.kind not in WRITE_KINDS:
            if not isinstance(pending, dict):
                self.fail("bad_field", f"{self.done}: pendingToolUse is "
                          f"{json.dumps(pending)[:80]}; it is null or {{id, name, input}}.")
                return False
            absent = [k for k in ("id", "name", "input") if k not in pending]
            if absent:
                k = self.call_number(pending.get("id"))
                which = f"tool {k}" if k else "the tool"
                self.fail("pending_without_input" if absent == ["input"] else "pending_incomplete",
                          f"{self.done}: pendingToolUse records "
                          f"{{{', '.join(k for k in ('id', 'name', 'input') if k in pending)}}} "
                          f"but has no {' or '.join(absent)}. Without the input {which} was "
                          "called with, resume can neither re-run the call nor check what it "
                          "did. Record all three: id, name and input.")
                return False
        return True

    def protocol(self) -> None:
        """messages, then pendingToolUse and turns against it, then the ledger against both."""
        state = self.state
        messages = state["messages"]
        if not self.conversation(messages):
            return
        if self.point.kind in WRITE_KINDS:
            return
        r = len(self.recorded)
        pending = state["pendingToolUse"]
        turns = state["turns"]
        on_disk = self.describe_disk()
        self.evidence["on_disk"] = {"turns": turns, "results_recorded": r,
                                    "pendingToolUse": pending, "tokensUsed": state["tokensUsed"]}
        if not self.pending_agrees(pending, messages, on_disk):
            return
        if turns != r:
            self.fail("turns", (
                f"{self.done}: turns is {turns}, but messages record {plural(r, 'tool result')}. "
                "turns counts finished turns (one per recorded result); resume would count its "
                "stopping conditions from the wrong number."))
            return
        if self.point.kind == NO_CRASH and not self.finished(r, pending):
            return
        self.ledger_agrees(pending, r, on_disk)

    def pending_agrees(self, pending: Any, messages: list, on_disk: str) -> bool:
        """pendingToolUse against what messages record: reset at save point B, the call the
        model named, after the message that named it; set whenever a request is unanswered."""
        recorded = self.recorded
        r = len(recorded)
        if pending is not None:
            k = self.call_number(pending.get("id"))
            if pending.get("id") in recorded:
                self.fail("pending_never_reset", (
                    f"{self.done}: {on_disk}, but tool {k} ({pending.get('name')}) had "
                    "finished: its result is already recorded in messages. "
                    "pendingToolUse was never reset to None at save point B, so resume would "
                    f"think tool {k} never finished and run it a second time."))
                return False
            expected = self.calls[r] if r < len(self.calls) else None
            if expected is None or canonical(pending) != canonical(expected):
                want = (f"{{id, name, input}} of tool {r + 1}, {json.dumps(expected)}"
                        if expected else "null: every call is recorded")
                self.fail("pending_mismatch", (
                    f"{self.done}: pendingToolUse is {json.dumps(pending)[:200]}, but it should "
                    f"be {want[:300]}: the call the model named, exactly as it named it."))
                return False
            if len(messages) % 2 == 1:
                self.fail("pending_before_message", (
                    f"{self.done}: pendingToolUse names tool {r + 1}, but the last message is not "
                    "the assistant message that asked for it: resume would hold a call in flight "
                    "with no request for it in the conversation it sends the model."))
                return False
        elif len(messages) % 2 == 0:
            self.fail("pending_missing", (
                f"{self.done}: messages end with the model's request for tool {r + 1}, but "
                "pendingToolUse is null: resume cannot tell whether that call was under way."))
            return False
        return True

    def ledger_agrees(self, pending: Any, r: int, on_disk: str) -> None:
        """The ledger against the file: every tool that ran is on record, none that did not."""
        ran = self.ran()
        returned = self.returned()
        pending_k = self.call_number(pending["id"]) if pending else None
        for k in ran:
            if k <= r or k == pending_k:
                continue
            key, text = self.no_trace_message(k, f"{self.done}: {on_disk}")
            self.fail(key, text)
            return
        for k in range(1, r + 1):
            if k not in ran:
                self.fail("never_ran", (
                    f"{self.done}: messages record a result for tool {k}, but the ledger shows "
                    "it never ran. A checkpoint records what happened, nothing else."))
                return
            if k not in returned:
                self.fail("result_not_returned", not_returned_message(self, k,
                                                                      "messages record"))
                return
        strict = self.point.kind in (NO_CRASH, "killed_during_model_call")
        if strict:
            for k in returned:
                if k > r:
                    self.fail("no_save_point_b", (
                        f"{self.done}: {on_disk}: tool {k} had returned and the model had been "
                        "called again, but its result was never saved (no save point B). Resume "
                        f"would have to run tool {k} again."))
                    return

    def conversation(self, messages: list) -> bool:
        """messages answers each call once, is a conversation the API accepts, and is the
        script's own conversation so far."""
        if not self.each_call_answered_once(messages):
            return False
        err = self.api_error(messages)
        if err is not None:
            self.fail("conversation", (
                f"{self.done}: messages in checkpoint.json is not a conversation the API would "
                f"accept: {err}. Resume would send it to the model and get an error back."))
            return False
        return self.follows_the_script(messages)

    def describe_disk(self) -> str:
        """What checkpoint.json held: its turn and pendingToolUse (and which save it was)."""
        state = self.state
        pending = state["pendingToolUse"]
        k = self.call_number(pending.get("id")) if isinstance(pending, dict) else None
        marker = "no pendingToolUse" if pending is None else f"pendingToolUse naming tool {k}"
        if self.same:
            return (f"{self.same} ({byte_count(self.obs.checkpoint_bytes)} bytes; "
                    f"turn {state['turns']}, {marker})")
        joint = "and" if pending is None else "with"
        return f"checkpoint.json held turn {state['turns']} {joint} {marker}"


def check(obs: Observation, scenario, point: CrashPoint | str | None = None) -> Verdict:
    """Judge what ``obs`` found on disk at ``point`` of ``scenario``; return a Verdict.

    ``scenario`` is a fake_llm Scenario or its name. ``point`` is the CrashPoint the run was
    killed at (from :func:`graders.crash_points`); an id alone is enough for every kind but the
    torn writes and kills before a rename, whose check compares the file with the saves of a dry
    run.
    """
    return _Check.judging(obs, scenario, point).run()
