"""The checker for several tool calls in one turn (Level 4): one :class:`Verdict` per crash state.

Same questions as :mod:`graders.judge.checkpoint_rules` (does ``checkpoint.json`` hold what resume
needs, judged against the trusted ledger of what the tools really did), for a loop in which one
model turn may ask for several tools. The checkpoint's shape for such a turn (STYLE.md, lesson 04):

- ``pendingToolUse`` is ``None`` when nothing is pending, else a LIST with one entry per
  ``tool_use`` block of the turn, in block order: ``{"id", "name", "input"}``, saved before the
  first tool of the turn runs (save point A);
- when a call finishes, its entry gains ``"result"`` (the string the tool returned), saved
  before the next tool starts, so a crash during tool 3 leaves tools 1 and 2 with their results;
- save point B appends ONE user message holding a ``tool_result`` for every block, in the order
  of the blocks, and sets ``pendingToolUse`` back to ``None``; ``turns`` counts the turn.

Three independent questions, each with its own problem codes (``PROBLEMS``; graders key partial
credit on them): is every call in flight on record (``IN_FLIGHT_PROBLEMS``), is every finished
call kept with its result (``KEPT_PROBLEMS``), and is ``messages`` one valid conversation with
one result message per turn (``MESSAGE_PROBLEMS``). A crash state may fail several at once;
``Verdict.evidence["messages"]`` holds the message for each problem found.
"""

from __future__ import annotations

import json
from typing import Any

from graders.judge import checkpoint_rules as _level2
from graders.judge.crash_points import NO_CRASH, CrashPoint, point_from_id
from graders.judge.observation import Observation
from graders.judge.verdict import Verdict
from graders.loop.protocol import SIX_FIELDS
from graders.text import plural

__all__ = ["check", "PROBLEMS", "IN_FLIGHT_PROBLEMS", "KEPT_PROBLEMS", "MESSAGE_PROBLEMS"]

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
}
#: One user message with every result, in block order; the conversation valid for the API.
MESSAGE_PROBLEMS: dict[str, str] = {
    "results_split": "the results of one turn are spread over several user messages",
    "results_out_of_order": "the results of one turn are not in the order of its blocks",
    "partial_result_message": "messages end with a user message that answers only some calls",
    "no_save_point_b": "tools returned and the model was called again, results not saved",
    "recorded_twice": "a tool result appears twice in messages",
    "never_ran": "messages record a result for a tool that never ran",
    "conversation": "messages is not a conversation the Messages API accepts",
    "script_mismatch": "messages departs from what the model and tools produced",
    "turns": "turns differs from the turns whose results are recorded",
    "incomplete": "a finished run's checkpoint lacks some tool results",
}
#: Every problem code a verdict's ``evidence["problem"]`` / ``["problems"]`` may hold: Level 2's
#: (how the run ended, how a save writes, the fields) and the three groups above.
PROBLEMS: dict[str, str] = {
    **{k: v for k, v in _level2.PROBLEMS.items()
       if k not in ("pending_without_input", "pending_incomplete")},
    **IN_FLIGHT_PROBLEMS, **KEPT_PROBLEMS, **MESSAGE_PROBLEMS,
}

_MODEL_REFUSALS = {"tool_results_split": "results_split",
                   "tool_results_out_of_order": "results_out_of_order"}
_canon = _level2._canon


def _tools(numbers: list[int]) -> str:
    if not numbers:
        return "no tool"
    words = [str(n) for n in numbers]
    if len(words) == 1:
        return f"tool {words[0]}"
    return "tools " + ", ".join(words[:-1]) + " and " + words[-1]


class _Check(_level2._Check):
    def __init__(self, obs: Observation, scenario, point: CrashPoint) -> None:
        super().__init__(obs, scenario, point)
        self.turn_calls = [scenario.turn_calls(t) for t in range(1, scenario.turn_count)]
        self.entries: list[dict] = []

    # -- helpers ---------------------------------------------------------------------------

    def numbers(self, ids) -> list[int]:
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
            self.fail(code, (
                f"Your run_agent's call to the model was refused, as the API refuses such a "
                f"request with a 400 error: {message[:400]} The run could not go on, and resume "
                "would send the same messages and be refused again."))
            return self.obs.checkpoint is not None
        return super().ending()

    # -- the fields ------------------------------------------------------------------------

    def fields(self) -> bool:
        state = self.state
        if not isinstance(state, dict):
            self.fail("bad_field", f"{self.done}: checkpoint.json holds a JSON "
                      f"{type(state).__name__}, not an object with the six fields.")
            return False
        missing = [f for f in SIX_FIELDS if f not in state]
        if missing:
            self.fail("missing_fields", (
                f"{self.done}: checkpoint.json lacks {', '.join(missing)}. Resume needs all six "
                "fields: version, task, turns, tokensUsed, messages, pendingToolUse."))
            return False
        for name, kind in _level2._SIX.items():
            value = state[name]
            if not isinstance(value, kind) or isinstance(value, bool):
                self.fail("bad_field", f"{self.done}: in checkpoint.json, {name} is "
                          f"{json.dumps(value)[:80]}, not {_level2._kind(kind)}.")
                return False
        if state["version"] != 1:
            self.fail("version", f"{self.done}: checkpoint.json has version {state['version']}. "
                      "This protocol is version 1; resume must refuse a version it does not "
                      "know, so it would refuse this checkpoint.")
            return False
        if state["task"] != self.sc.task:
            self.fail("task", f"{self.done}: task in checkpoint.json is "
                      f"{json.dumps(state['task'])[:80]}, not the task the run was given: "
                      "resume could not tell which task this checkpoint belongs to.")
            return False
        return True

    # -- the conversation ------------------------------------------------------------------

    def conversation(self, messages: list) -> bool:
        from fake_llm import ConversationError, validate_conversation

        counts: dict[Any, int] = {}
        for message in messages[1:]:
            content = message.get("content") if isinstance(message, dict) else None
            for block in content if isinstance(content, list) else []:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    tid = block.get("tool_use_id")
                    counts[tid] = counts.get(tid, 0) + 1
                    if counts[tid] == 1:
                        self.recorded.append(tid)
        twice = [tid for tid, c in counts.items() if c > 1]
        if twice:
            k = self.call_number(twice[0])
            self.fail("recorded_twice", (
                f"{self.done}: messages record the result of tool {k or twice[0]} "
                f"{counts[twice[0]]} times. Each call is recorded exactly once; the API would "
                "refuse a conversation that answers one call twice."))
            return False
        try:
            validate_conversation(messages, _level2._script(self.sc)["tools"],
                                  allow_pending=True)
        except ConversationError as err:
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
        script = _level2._script(self.sc)["conversation"]
        for i, message in enumerate(messages):
            if i < len(script) and _canon(message) == _canon(script[i]):
                continue
            if i < len(script) and self.reordered(message, script[i]):
                names = [c["name"] for c in self.turn_calls[i // 2 - 1]]
                self.fail("results_out_of_order", (
                    f"{self.done}: messages[{i}] in checkpoint.json holds every result of turn "
                    f"{i // 2}, but not in the order of its tool_use blocks "
                    f"({', '.join(names)}). The model reads each result by its place as well as "
                    "its id; resume would send a conversation that departs from the one that "
                    "happened."))
                return False
            want = (json.dumps(script[i])[:200] if i < len(script)
                    else "nothing: the conversation had ended")
            self.fail("script_mismatch", (
                f"{self.done}: messages[{i}] in checkpoint.json is "
                f"{json.dumps(message)[:200]}, but the model and tools produced {want}. "
                "messages must hold the conversation exactly as it happened: the model's "
                "content as it came, each tool result as the tool returned it."))
            return False
        return True

    @staticmethod
    def reordered(message: Any, wanted: dict) -> bool:
        if not isinstance(message, dict) or message.get("role") != "user":
            return False
        got = message.get("content")
        if not isinstance(got, list) or len(got) != len(wanted["content"]):
            return False
        return sorted(map(_canon, got)) == sorted(map(_canon, wanted["content"]))

    # -- the protocol: three questions, each judged on its own -----------------------------

    def protocol(self) -> None:
        state = self.state
        messages = state["messages"]
        if not self.conversation(messages):
            if self.point.kind in _level2.WRITE_KINDS:
                return
            done_turns = None
        else:
            if self.point.kind in _level2.WRITE_KINDS:
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
                    f"{_tools(self.numbers(c['id'] for c in calls))}: resume cannot tell whether "
                    "those calls were under way."))
                return
        elif not isinstance(pending, list):
            self.fail("pending_not_list", (
                f"{self.done}: pendingToolUse is {json.dumps(pending)[:160]}, one call. A turn "
                "may ask for several tools at once, and resume reads pendingToolUse as the list "
                "of that turn's calls: with one call on record it cannot tell that the others "
                "were asked for, nor which of them had run."))
            return
        elif not pending:
            self.fail("pending_empty", (
                f"{self.done}: pendingToolUse is an empty list. Nothing pending is None; resume "
                "would read [] as a turn that asked for no tools."))
            return
        else:
            bad = [p for p in pending if not isinstance(p, dict)
                   or any(k not in p for k in ("id", "name", "input"))
                   or ("result" in p and not isinstance(p["result"], str))]
            if bad:
                self.fail("pending_entry_invalid", (
                    f"{self.done}: pendingToolUse holds {json.dumps(bad[0])[:160]}. Each entry "
                    "is {id, name, input} of one call, with result (the string the tool "
                    "returned) once it finished: without them resume can neither re-run a call "
                    "nor check what it did."))
                return
            ids = [p["id"] for p in pending]
            again = [i for i in ids if i in self.recorded]
            if again:
                k = self.call_number(again[0])
                self.fail("pending_never_reset", (
                    f"{on_disk}, but tool {k} ({self.calls[k - 1]['name'] if k else '?'}) is "
                    "already recorded in messages. pendingToolUse was never reset to None at "
                    f"save point B, so resume would think tool {k} never finished and run it a "
                    "second time."))
                return
            if done_turns is not None:
                if len(messages) % 2 == 1:
                    self.fail("pending_before_message", (
                        f"{on_disk}, but the last message is not the assistant message that "
                        "asked for those calls: resume would hold calls in flight with no request "
                        "for them in the conversation it sends the model."))
                    return
                wanted = (self.turn_calls[done_turns] if done_turns < len(self.turn_calls)
                          else [])
                listed = [{"id": p["id"], "name": p["name"], "input": p["input"]}
                          for p in pending]
                if _canon(listed) != _canon(wanted):
                    canon = {_canon(c) for c in wanted}
                    numbers = self.numbers(c["id"] for c in wanted)
                    if all(_canon(e) in canon for e in listed) and len(listed) < len(wanted):
                        absent = [k for k, c in zip(numbers, wanted, strict=True)
                                  if _canon(c) not in {_canon(e) for e in listed}]
                        self.fail("pending_missing_calls", (
                            f"{on_disk}, but the model asked for {_tools(numbers)} in that turn: "
                            f"{_tools(absent)} {'is' if len(absent) == 1 else 'are'} not listed. "
                            "Resume would not know those calls were asked for, nor whether they "
                            "ran."))
                    else:
                        self.fail("pending_mismatch", (
                            f"{self.done}: pendingToolUse is {json.dumps(listed)[:200]}, but it "
                            f"should list {_tools(numbers)}, {json.dumps(wanted)[:240]}: every "
                            "call of the turn exactly as the model named it, in the order of the "
                            "blocks."))
                    return
        traced = set(self.recorded) | {p.get("id") for p in self.entries}
        for k in self.ran():
            if self.calls[k - 1]["id"] in traced:
                continue
            key, text = self.no_trace_message(k, on_disk)
            self.fail(key, text)
            return

    def kept(self) -> None:
        """No finished call lost: a call that returned keeps its result until save point B."""
        if self.point.kind == "killed_during_model_call":
            return  # by then save point B must have recorded them: judged with the messages
        ledger = {k: entry for k, entry in self.executions()}
        by_id = {p.get("id"): p for p in self.entries}
        for p in self.entries:
            k = self.call_number(p.get("id"))
            if "result" in p and k is not None and k not in ledger:
                self.fail("result_never_ran", (
                    f"{self.done}: pendingToolUse keeps a result for tool {k} "
                    f"({self.calls[k - 1]['name']}), but the ledger shows it never ran. A "
                    "checkpoint records what happened; resume would hand the model a result no "
                    "tool produced."))
                return
        for k in self.returned():
            call = self.calls[k - 1]
            if call["id"] in self.recorded:
                continue
            entry = by_id.get(call["id"])
            if entry is None or "result" not in entry:
                where = ("is listed in pendingToolUse without its result" if entry is not None
                         else "is not in checkpoint.json at all")
                self.fail("result_lost", (
                    f"{self.done}: tool {k} ({call['name']}) had returned its result before "
                    f"that, and it {where}: a finished call lost. Resume would have to run "
                    f"tool {k} again, though it already ran."))
                return
            if entry["result"] != ledger[k].get("result"):
                self.fail("result_changed", (
                    f"{self.done}: pendingToolUse keeps a result for tool {k} ({call['name']}) "
                    f"that is not what the tool returned ({len(str(entry['result']))} characters "
                    f"instead of {len(str(ledger[k].get('result')))}). Resume would hand the "
                    "model a result the tool never gave."))
                return

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
        ran = self.ran()
        for k in range(1, len(self.calls) + 1):
            if self.calls[k - 1]["id"] in self.recorded and k not in ran:
                self.fail("never_ran", (
                    f"{self.done}: messages record a result for tool {k}, but the ledger shows "
                    "it never ran. A checkpoint records what happened, nothing else."))
                return
        if self.point.kind == NO_CRASH:
            reported = any(key == "pending_never_reset" for key, _ in self.problems)
            self.finished(len(self.recorded), None if reported else pending)
            return
        if self.point.kind == "killed_during_model_call":
            lost = [k for k in self.returned() if self.calls[k - 1]["id"] not in self.recorded]
            if lost:
                self.fail("no_save_point_b", (
                    f"{self.done}: {self.describe_disk()}: {_tools(lost)} had returned and the "
                    "model had been called again, but the result message was never saved (save "
                    f"point B). Resume would have to run {_tools(lost)} again."))

    # -- words -----------------------------------------------------------------------------

    def describe_disk(self) -> str:
        state = self.state
        pending = state["pendingToolUse"]
        if isinstance(pending, list) and pending:
            numbers = self.numbers(p.get("id") for p in pending if isinstance(p, dict))
            kept = self.numbers(p.get("id") for p in pending
                                if isinstance(p, dict) and "result" in p)
            marker = f"pendingToolUse listing {_tools(numbers)}"
            if kept:
                marker += f" (the result of {_tools(kept)} kept)"
        elif isinstance(pending, dict):
            marker = f"pendingToolUse naming {_tools(self.numbers([pending.get('id')]))} alone"
        else:
            marker = "no pendingToolUse"
        if self.same:
            return (f"{self.same} ({_level2._bytes(self.obs.checkpoint_bytes)} bytes; "
                    f"turn {state['turns']}, {marker})")
        joint = "and" if pending is None else "with"
        return f"checkpoint.json held turn {state['turns']} {joint} {marker}"

    def verdict(self) -> Verdict:
        verdict = super().verdict()
        verdict.evidence["messages"] = {}
        for key, text in self.problems:
            verdict.evidence["messages"].setdefault(key, text)
        return verdict


def check(obs: Observation, scenario, point: CrashPoint | str | None = None) -> Verdict:
    """Judge what ``obs`` found on disk at ``point`` of ``scenario`` (several calls per turn).

    Same arguments and result as :func:`graders.judge.checkpoint_rules.check`; the checkpoint is
    held to the list shape of ``pendingToolUse`` described in this module's docstring. Pass it as
    the ``checker`` of :func:`graders.judge.verdicts.judge` or of
    :class:`graders.sandbox.harness.TracedHarness`.
    """
    if isinstance(scenario, str):
        from fake_llm import load_scenario

        scenario = load_scenario(scenario)
    if point is None:
        point = obs.point
    if isinstance(point, str):
        point = point_from_id(point)
    return _Check(obs, scenario, point).run()
