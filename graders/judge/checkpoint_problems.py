"""The problem codes of the rules for one tool call per turn (Levels 1 and 2), with what each
means. Graders key partial credit on them: keep the codes stable.
"""

__all__ = ["PROBLEMS"]

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
