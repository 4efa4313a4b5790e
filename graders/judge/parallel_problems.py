"""The problem codes of the rules for several tool calls in one turn (Level 4), in three
groups, one per question a check asks; graders key partial credit on them: keep them stable.
"""

from graders.judge.checkpoint_problems import PROBLEMS as ONE_CALL_PROBLEMS

__all__ = ["PROBLEMS", "IN_FLIGHT_PROBLEMS", "KEPT_PROBLEMS", "MESSAGE_PROBLEMS"]

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
#: Every problem code a verdict's ``evidence["problem"]`` / ``["problems"]`` may hold: Level 2's
#: (how the run ended, how a save writes, the fields) and the three groups above.
PROBLEMS: dict[str, str] = {
    **{k: v for k, v in ONE_CALL_PROBLEMS.items()
       if k not in ("pending_without_input", "pending_incomplete")},
    **IN_FLIGHT_PROBLEMS, **KEPT_PROBLEMS, **MESSAGE_PROBLEMS,
}
