"""The rules for several tool calls in one turn (Level 4): one :class:`Verdict` per crash state.

Same questions as :mod:`graders.judge.checkpoint_rules` (does ``checkpoint.json`` hold what resume
needs, judged against the trusted ledger of what the tools really did), for a loop in which one
model turn may ask for several tools. The checkpoint's shape for such a turn (STYLE.md, lesson 05):

- ``pendingToolUse`` is ``None`` when nothing is pending, else a LIST with one entry per
  ``tool_use`` block of the turn, in block order: ``{"id", "name", "input"}``, saved before the
  first tool of the turn runs (save point A);
- when a call finishes, its entry gains ``"result"`` (the string the tool returned), saved
  before the next tool starts, so a crash during tool 3 leaves tools 1 and 2 with their results;
- save point B appends ONE user message holding a ``tool_result`` for every block (in any order:
  the API pairs results with calls by ``tool_use_id``; block order is a good habit, never
  required) and sets ``pendingToolUse`` back to ``None``; ``turns`` counts the turn.

Three independent questions, each with its own problem codes (``PROBLEMS``; graders key partial
credit on them): is every call in flight on record (``IN_FLIGHT_PROBLEMS``), is every finished
call kept with its result (``KEPT_PROBLEMS``), and is ``messages`` one valid conversation with
one result message per turn (``MESSAGE_PROBLEMS``). A crash state may fail several at once;
``Verdict.evidence["messages"]`` holds the message for each problem found.

One check of a crash state when one turn may ask for several tools (Level 4): the turn's
calls, how the run ended (a model that refused the conversation), the fields, the conversation,
and the words of its messages. The three questions it answers are in
:mod:`graders.judge.parallel_rules`.
"""

from __future__ import annotations

import json
from typing import Any

from graders.judge.check_state import (
    WRITE_KINDS,
    byte_count,
    canonical,
    not_returned_message,
    results_in_save,
)
from graders.judge.crash_check import CrashCheck
from graders.judge.crash_points import NO_CRASH, CrashPoint
from graders.judge.recording import (
    IN_FLIGHT_PROBLEMS,
    KEPT_PROBLEMS,
    MESSAGE_PROBLEMS,
    Observation,
    Verdict,
)
from graders.judge.recording import PARALLEL_PROBLEMS as PROBLEMS
from graders.text import plural

__all__ = ["check", "PROBLEMS", "IN_FLIGHT_PROBLEMS", "KEPT_PROBLEMS", "MESSAGE_PROBLEMS",
           "ParallelCheck", "tools_words"]


# -- parallel check --------------------------------------------------------------------------------


#: The model's refusals of a conversation whose results were all there, in a shape the API
#: refuses or reads differently: a message problem alone (the calls and the kept results are
#: judged at the crash states before it). A call never answered is not among them.
_MODEL_REFUSALS = {"tool_results_split": "results_split", "tool_result_not_first": "conversation",
                   "content_invalid": "conversation", "message_invalid": "conversation",
                   "roles_not_alternating": "conversation", "tool_result_duplicate":
                   "recorded_twice", "tool_result_changed": "script_mismatch",
                   "script_mismatch": "script_mismatch"}


def tools_words(numbers: list[int]) -> str:
    """Tool numbers in words: ``"tools 1, 2 and 3"``."""
    if not numbers:
        return "no tool"
    words = [str(n) for n in numbers]
    if len(words) == 1:
        return f"tool {words[0]}"
    return "tools " + ", ".join(words[:-1]) + " and " + words[-1]


class ParallelCheck(CrashCheck):
    """A check for several calls in one turn: ``pendingToolUse`` is a list of the turn's calls."""

    def __init__(self, obs: Observation, scenario, point: CrashPoint) -> None:
        super().__init__(obs, scenario, point)
        self.turn_calls = [scenario.turn_calls(t) for t in range(1, scenario.turn_count)]
        self.entries: list[dict] = []

    # -- helpers ---------------------------------------------------------------------------

    def numbers(self, ids) -> list[int]:
        """The script's numbers of the calls with these ids (unknown ids left out)."""
        return [k for k in (self.call_number(i) for i in ids) if k is not None]

    def a_save_after_tool(self, k: int) -> dict | None:
        """A save placed after tool ``k`` returned whose pendingToolUse lists it first."""
        call_id = self.calls[k - 1]["id"] if k <= len(self.calls) else None
        for save in self.point.trace or []:
            pending = save.get("pending")
            listed = pending if isinstance(pending, list) else [pending]
            ids = [p.get("id") for p in listed if isinstance(p, dict)]
            if call_id in ids:
                if save.get("phase") == "B" and isinstance(save.get("tool"), int) \
                        and save["tool"] >= k:
                    return save
                return None
        return None

    # -- how the run ended: a model refusal is a conversation problem, judged with the disk --

    def ending(self) -> bool:
        obs = self.obs
        error = obs.error or {}
        message = str(error.get("message", ""))
        rule = message[1:message.find("]")] if message.startswith("[") else ""
        if obs.ended == "raised" and rule in _MODEL_REFUSALS and not error.get("harness") \
                and error.get("type") in ("ConversationError", "FakeModelError"):
            # Every result was there, in the wrong shape: a message problem alone. A call never
            # answered (the loop ran only some blocks) is a run that did not get through.
            code = _MODEL_REFUSALS[rule]
            why = ("the messages departed from the conversation the model and the tools had "
                   "produced" if code == "script_mismatch" else
                   "as the API refuses such a request with a 400 error")
            self.fail(code, (
                f"Your run_agent's call to the model was refused, {why}: {message[:400]} The run "
                "could not go on, and resume would send the same messages and be refused "
                "again."))
            return self.obs.checkpoint is not None
        return super().ending()

    # -- the fields ------------------------------------------------------------------------

    def fields(self) -> bool:
        """The six fields' shape, version 1 and the run's task (pendingToolUse: at the calls)."""
        return self.shape_is_right() and self.identity_is_right()

    # -- the conversation ------------------------------------------------------------------

    def conversation(self, messages: list) -> bool:
        """messages answers each call once, is a conversation the API accepts (one result
        message per turn), and is the script's own conversation so far."""
        return (self.each_call_answered_once(messages) and self.accepted_by_the_api(messages)
                and self.follows_the_script(messages))

    def accepted_by_the_api(self, messages: list) -> bool:
        """messages is a conversation the Messages API accepts, up to the calls in flight."""
        err = self.api_error(messages)
        if err is not None:
            last = err.index == len(messages) - 1
            if err.rule == "tool_results_split":
                code, what = "results_split", (
                    "the results of one turn are spread over more than one user message")
            elif (err.rule == "tool_result_missing" and last and isinstance(messages[-1], dict)
                  and messages[-1].get("role") == "user"):
                code, what = "partial_result_message", (
                    "messages end with a user message that answers only some of the calls the "
                    "turn asked for")
            else:
                code, what = "conversation", "messages is not a conversation the API would accept"
            self.fail(code, (
                f"{self.done}: in checkpoint.json, {what}: {str(err).rstrip('.')}. Resume would "
                "send these "
                "messages to the model and get a 400 error back."))
            return False
        return True

    # -- words -----------------------------------------------------------------------------

    def describe_disk(self) -> str:
        state = self.state
        pending = state["pendingToolUse"]
        if isinstance(pending, list) and pending:
            numbers = self.numbers(p.get("id") for p in pending if isinstance(p, dict))
            kept = self.numbers(p.get("id") for p in pending
                                if isinstance(p, dict) and "result" in p)
            marker = f"pendingToolUse listing {tools_words(numbers)}"
            if kept:
                marker += f" (the result of {tools_words(kept)} kept)"
        elif isinstance(pending, dict):
            marker = f"pendingToolUse naming {tools_words(self.numbers([pending.get('id')]))} alone"
        else:
            marker = "no pendingToolUse"
        if self.same:
            return (f"{self.same} ({byte_count(self.obs.checkpoint_bytes)} bytes; "
                    f"turn {state['turns']}, {marker})")
        joint = "and" if pending is None else "with"
        return f"checkpoint.json held turn {state['turns']} {joint} {marker}"

    def verdict(self) -> Verdict:
        verdict = super().verdict()
        verdict.evidence["messages"] = {}
        for key, text in self.problems:
            verdict.evidence["messages"].setdefault(key, text)
        return verdict


# -- parallel rules --------------------------------------------------------------------------------


class _Check(ParallelCheck):
    """The three questions, each judged on its own."""

    def protocol(self) -> None:
        """Is every call in flight on record, every finished call kept, every turn's results
        in one message: each question judged on its own."""
        state = self.state
        messages = state["messages"]
        if not self.conversation(messages):
            if self.point.kind in WRITE_KINDS:
                return
            done_turns = None
        else:
            if self.point.kind in WRITE_KINDS:
                return
            done_turns = (len(messages) - 1) // 2
        pending = state["pendingToolUse"]
        self.entries = ([p for p in pending if isinstance(p, dict)] if isinstance(pending, list)
                        else [pending] if isinstance(pending, dict) else [])
        self.evidence["on_disk"] = {"turns": state["turns"], "results_recorded":
                                    len(self.recorded), "pendingToolUse": pending,
                                    "tokensUsed": state["tokensUsed"]}
        self.in_flight(pending, messages, done_turns)
        self.kept()
        if done_turns is not None:
            self.messages_complete(pending, done_turns)

    def in_flight(self, pending: Any, messages: list, done_turns: int | None) -> None:
        """No call in flight without a trace: save point A lists every call of the turn."""
        on_disk = f"{self.done}: {self.describe_disk()}"
        if pending is None:
            if done_turns is not None and len(messages) % 2 == 0:
                calls = self.turn_calls[done_turns] if done_turns < len(self.turn_calls) else []
                self.fail("pending_missing", (
                    f"{on_disk}, yet messages end with the model's request for "
                    f"{tools_words(self.numbers(c['id'] for c in calls))}: resume cannot tell "
                    "whether those calls were under way."))
                return
        elif not self.pending_is_a_list_of_calls(pending, on_disk):
            return
        elif done_turns is not None and not self.pending_is_the_turn(pending, messages,
                                                                     done_turns, on_disk):
            return
        traced = set(self.recorded) | {p.get("id") for p in self.entries}
        for k in self.ran():
            if self.calls[k - 1]["id"] in traced:
                continue
            key, text = self.no_trace_message(k, on_disk)
            self.fail(key, text)
            return

    def pending_is_a_list_of_calls(self, pending: Any, on_disk: str) -> bool:
        """pendingToolUse is a non-empty list of whole entries, none of them answered already."""
        if not isinstance(pending, list):
            self.fail("pending_not_list", (
                f"{self.done}: pendingToolUse is {json.dumps(pending)[:160]}, one call. A turn "
                "may ask for several tools at once, and resume reads pendingToolUse as the list "
                "of that turn's calls: with one call on record it cannot tell that the others "
                "were asked for, nor which of them had run."))
            return False
        if not pending:
            self.fail("pending_empty", (
                f"{self.done}: pendingToolUse is an empty list. Nothing pending is None; resume "
                "would read [] as a turn that asked for no tools."))
            return False
        bad = [p for p in pending if not isinstance(p, dict)
               or any(k not in p for k in ("id", "name", "input"))
               or ("result" in p and not isinstance(p["result"], str))]
        if bad:
            self.fail("pending_entry_invalid", (
                f"{self.done}: pendingToolUse holds {json.dumps(bad[0])[:160]}. Each entry "
                "is {id, name, input} of one call, with result (the string the tool "
                "returned) once it finished: without them resume can neither re-run a call "
                "nor check what it did."))
            return False
        ids = [p["id"] for p in pending]
        again = [i for i in ids if i in self.recorded]
        if again:
            k = self.call_number(again[0])
            self.fail("pending_never_reset", (
                f"{on_disk}, but tool {k} ({self.calls[k - 1]['name'] if k else '?'}) is "
                "already recorded in messages. pendingToolUse was never reset to None at "
                f"save point B, so resume would think tool {k} never finished and run it a "
                "second time."))
            return False
        return True

    def pending_is_the_turn(self, pending: list, messages: list, done_turns: int,
                            on_disk: str) -> bool:
        """pendingToolUse follows the message that asked for its calls, and lists every call
        of that turn exactly as the model named it, in block order."""
        if len(messages) % 2 == 1:
            self.fail("pending_before_message", (
                f"{on_disk}, but the last message is not the assistant message that "
                "asked for those calls: resume would hold calls in flight with no request "
                "for them in the conversation it sends the model."))
            return False
        wanted = (self.turn_calls[done_turns] if done_turns < len(self.turn_calls)
                  else [])
        listed = [{"id": p["id"], "name": p["name"], "input": p["input"]}
                  for p in pending]
        if canonical(listed) == canonical(wanted):
            return True
        canon = {canonical(c) for c in wanted}
        numbers = self.numbers(c["id"] for c in wanted)
        if all(canonical(e) in canon for e in listed) and len(listed) < len(wanted):
            absent = [k for k, c in zip(numbers, wanted, strict=True)
                      if canonical(c) not in {canonical(e) for e in listed}]
            self.fail("pending_missing_calls", (
                f"{on_disk}, but the model asked for {tools_words(numbers)} in that turn: "
                f"{tools_words(absent)} {'is' if len(absent) == 1 else 'are'} not listed. "
                "Resume would not know those calls were asked for, nor whether they "
                "ran."))
        else:
            self.fail("pending_mismatch", (
                f"{self.done}: pendingToolUse is {json.dumps(listed)[:200]}, but it "
                f"should list {tools_words(numbers)}, {json.dumps(wanted)[:240]}: every "
                "call of the turn exactly as the model named it, in the order of the "
                "blocks."))
        return False

    def kept(self) -> None:
        """No finished call lost, none claimed before it returned: a result once saved stays
        saved until save point B, and a call that returned is kept with its result, or is
        about to be (a later save keeps it before save point B: a kill can catch a call between
        its return and its save exactly as it can catch one in flight)."""
        if self.point.kind == "killed_during_model_call":
            return  # by then save point B must have recorded them: judged with the messages
        ledger = {k: entry for k, entry in self.executions()}
        returned = set(self.returned())
        by_id = {p.get("id"): p for p in self.entries}
        claimed = [k for k in (self.call_number(p.get("id")) for p in self.entries
                               if "result" in p) if k is not None and k not in returned]
        never = [k for k in claimed if k not in ledger]
        if never:
            k = never[0]
            self.fail("result_never_ran", (
                f"{self.done}: pendingToolUse keeps a result for tool {k} "
                f"({self.calls[k - 1]['name']}), but the ledger shows it never ran. A "
                "checkpoint records what happened; resume would hand the model a result no "
                "tool produced."))
        elif claimed:
            self.fail("result_not_returned", not_returned_message(self, claimed[0],
                                                                  "pendingToolUse keeps"))
        if claimed:
            return
        before, after = self.saves_around()
        for k in self.returned():
            call = self.calls[k - 1]
            if call["id"] in self.recorded:
                continue
            entry = by_id.get(call["id"])
            if entry is None or "result" not in entry:
                self.result_missing(k, entry, before, after)
                if self.problems:
                    return
                continue
            if entry["result"] != ledger[k].get("result"):
                self.fail("result_changed", (
                    f"{self.done}: pendingToolUse keeps a result for tool {k} ({call['name']}) "
                    f"that is not what the tool returned ({len(str(entry['result']))} characters "
                    f"instead of {len(str(ledger[k].get('result')))}). Resume would hand the "
                    "model a result the tool never gave."))
                return

    def result_missing(self, k: int, entry: dict | None, before: list, after: list) -> None:
        """Tool ``k`` had returned and its result is not on disk: lost, unless this moment
        falls between its return and the save that keeps it (before save point B)."""
        call = self.calls[k - 1]
        saved = next((s for s in reversed(before) if call["id"] in results_in_save(s)[0]), None)
        where = ("is listed in pendingToolUse without its result" if entry is not None
                 else "is not in checkpoint.json at all")
        if saved is not None:
            self.fail("result_lost", (
                f"{self.done}: tool {k} ({call['name']}) had returned, save {saved.n} had kept "
                f"its result, and now it {where}: a result once saved must stay saved until "
                f"save point B records it. Resume would have to run tool {k} again, though it "
                "already ran."))
            return
        for save in after:
            kept, answered = results_in_save(save)
            if call["id"] in kept:
                later = self.called_next_by_its_saver(k, save)
                if later is None:
                    return  # caught between the call's return and its save: resume re-runs it
                self.fail("result_lost", (
                    f"{self.done}: tool {k} ({call['name']}) had returned, and {where}: the "
                    f"code that called it went on to call tool {later} before keeping its "
                    f"result (save {save.n} keeps it only later). Resume would have to run "
                    f"tool {k} again, though it already ran."))
                return
            if call["id"] in answered:
                break
        self.fail("result_lost", (
            f"{self.done}: tool {k} ({call['name']}) had returned its result before "
            f"that, and it {where}: a finished call lost. Resume would have to run "
            f"tool {k} again, though it already ran."))

    def called_next_by_its_saver(self, k: int, keeper: Any) -> int | None:
        """The tool the thread that called tool ``k`` called next, before this moment, when
        that same thread is the one whose later save keeps ``k``'s result: it went on instead
        of saving. None when it did not, or when the recording does not say which thread
        made each call and save (then a late save cannot be told from one that waited)."""
        runs = self.executions()
        mine = next((e for number, e in runs if number == k), {})
        thread = mine.get("thread")
        if thread is None or getattr(keeper, "thread", None) != thread:
            return None
        later = [number for number, e in runs
                 if e.get("thread") == thread and e.get("index", 0) > mine.get("index", 0)]
        return later[0] if later else None

    def messages_complete(self, pending: Any, done_turns: int) -> None:
        """One result message per turn, saved before the model is called again; all at the end."""
        state = self.state
        if state["turns"] != done_turns:
            self.fail("turns", (
                f"{self.done}: turns is {state['turns']}, but messages record "
                f"{plural(done_turns, 'finished turn')}. turns counts finished turns (one per "
                "result message); resume would count its stopping conditions from the wrong "
                "number."))
            return
        ran, returned = self.ran(), set(self.returned())
        for k in range(1, len(self.calls) + 1):
            if self.calls[k - 1]["id"] not in self.recorded or k in returned:
                continue
            if k not in ran:
                self.fail("never_ran", (
                    f"{self.done}: messages record a result for tool {k}, but the ledger shows "
                    "it never ran. A checkpoint records what happened, nothing else."))
            else:
                self.fail("result_not_returned", not_returned_message(self, k,
                                                                      "messages record"))
            return
        if self.point.kind == NO_CRASH:
            reported = any(key == "pending_never_reset" for key, _ in self.problems)
            self.finished(len(self.recorded), None if reported else pending)
            return
        if self.point.kind == "killed_during_model_call":
            lost = [k for k in self.returned() if self.calls[k - 1]["id"] not in self.recorded]
            if lost:
                self.fail("no_save_point_b", (
                    f"{self.done}: {self.describe_disk()}: {tools_words(lost)} had returned and "
                    "the model had been called again, but the result message was never saved "
                    f"(save point B). Resume would have to run {tools_words(lost)} again."))


def check(obs: Observation, scenario, point: CrashPoint | str | None = None) -> Verdict:
    """Judge what ``obs`` found on disk at ``point`` of ``scenario`` (several calls per turn).

    Same arguments and result as :func:`graders.judge.checkpoint_rules.check`; the checkpoint is
    held to the list shape of ``pendingToolUse`` described in this module's docstring. Pass it as
    the ``rules`` of :func:`graders.judge.matrix.judge` or of
    :class:`graders.grading.recorded.TracedHarness`.
    """
    return _Check.judging(obs, scenario, point).run()
