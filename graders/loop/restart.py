"""What a restarted process runs: the reference resume as a loop that saves, with the student's
``save_checkpoint``.

After a kill, the grader restarts the run in the same folder, leftovers included (Level 2's
restart runs, :mod:`graders.judge.restarts`): this ``run_agent`` reads ``checkpoint.json`` (none:
the task starts over, nothing was lost), runs again a call that was in flight (whether it had
finished is the course's next lesson), and goes on to the end as the lesson's loop does, saving
at both save points through whatever ``save_checkpoint`` the submission defines.
:func:`joined` is the submission with this loop in place of its own.
"""

from __future__ import annotations

import inspect
import json as _resume_json
import os as _resume_os

__all__ = ["run_agent", "joined", "MARK"]

# names of their own: the submission beside this loop may rebind json, os or CHECKPOINT
_RESUME_CHECKPOINT = "checkpoint.json"

#: The line between the submission and the loop the grader adds to restart it.
MARK = "# --- resume after a kill, added by the grader ---"


def run_agent(task, tools, call_model, execute_tool):
    """Resume from ``checkpoint.json`` and run the loop to the end, saving at save points A and
    B through ``save_checkpoint``; return the final state."""
    if _resume_os.path.exists(_RESUME_CHECKPOINT):
        with open(_RESUME_CHECKPOINT, encoding="utf-8") as f:
            state = _resume_json.load(f)
    else:
        state = {"version": 1, "task": task, "turns": 0, "tokensUsed": 0,
                 "messages": [{"role": "user", "content": task}], "pendingToolUse": None}
    pending = state["pendingToolUse"]
    if pending is not None:
        # in flight when the process died: run it again, then record it as save point B does
        result = execute_tool(pending["name"], pending["input"])
        state["messages"].append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": pending["id"], "content": result}]})
        state["turns"] += 1
        state["pendingToolUse"] = None
        save_checkpoint(state)  # noqa: F821 - the submission's, defined beside this loop

    response = call_model(tools=tools, messages=state["messages"])
    state["tokensUsed"] += response["usage"]["output_tokens"]
    while response["stop_reason"] == "tool_use":
        state["messages"].append({"role": "assistant", "content": response["content"]})
        block = next(b for b in response["content"] if b["type"] == "tool_use")
        state["pendingToolUse"] = {"id": block["id"], "name": block["name"],
                                   "input": block["input"]}
        save_checkpoint(state)  # noqa: F821 - save point A
        result = execute_tool(block["name"], block["input"])
        state["messages"].append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": block["id"], "content": result}]})
        state["turns"] += 1
        state["pendingToolUse"] = None
        save_checkpoint(state)  # noqa: F821 - save point B
        response = call_model(tools=tools, messages=state["messages"])
        state["tokensUsed"] += response["usage"]["output_tokens"]
    return state


def joined(source: str) -> str:
    """``source`` (a submission) with this ``run_agent`` defined after it, in place of its own."""
    return (f"{source.rstrip()}\n\n\n{MARK}\nimport json as _resume_json\n"
            f"import os as _resume_os\n\n_RESUME_CHECKPOINT = {_RESUME_CHECKPOINT!r}\n\n\n"
            f"{inspect.getsource(run_agent)}")
