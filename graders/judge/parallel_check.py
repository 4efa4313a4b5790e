"""One check of a crash state when one turn may ask for several tools (Level 4): the turn's
calls, how the run ended (a model that refused the conversation), the fields, the conversation,
and the words of its messages. The three questions it answers are in
:mod:`graders.judge.parallel_rules`.
"""

from __future__ import annotations

from graders.judge.check_state import byte_count, script_of
from graders.judge.crash_check import CrashCheck
from graders.judge.crash_points import CrashPoint
from graders.judge.observation import Observation
from graders.judge.verdict import Verdict

__all__ = ["ParallelCheck", "tools_words"]

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
        from fake_llm import ConversationError, validate_conversation

        try:
            validate_conversation(messages, script_of(self.sc)["tools"],
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
