"""Level 2, fixed: an agent loop whose checkpoint survives a crash at any moment.

The starter had two latent failures, and this reference fixes both:

1. ``save_checkpoint`` overwrote ``checkpoint.json`` in place, so a process killed mid-write left
   half a JSON document, with the previous save already gone. Here every save is an *atomic
   save*: write a temp file in the same directory, then ``os.replace`` it over ``checkpoint.json``.
2. ``run_agent`` saved only after the tool result was recorded (save point B), so a crash while a
   tool ran left no trace of that call on disk. Here *save point A* records the call in
   ``pendingToolUse`` and saves before the tool runs; save point B sets it back to ``None``.
"""

from __future__ import annotations

import json
import os
import tempfile

CHECKPOINT = "checkpoint.json"


def save_checkpoint(state):
    """Write ``state`` to ``checkpoint.json`` in the current directory as one atomic save.

    At every instant ``checkpoint.json`` is either the previous complete save or this one, never
    half of either: the new content goes to a temp file next to it, and only a complete temp file
    is renamed over the checkpoint.
    """
    directory = os.path.dirname(os.path.abspath(CHECKPOINT))
    # Same directory as the checkpoint: a rename is only atomic within one filesystem.
    fd, tmp_path = tempfile.mkstemp(dir=directory, prefix="checkpoint.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(state, f)
            f.flush()
            # A killed process keeps what the page cache holds; fsync also asks for the bytes to
            # reach the disk before the rename makes them the checkpoint, for a power cut. On
            # Linux fsync makes the bytes durable; a durable rename also needs an fsync of the
            # directory after it (Level 3). On macOS fsync stops at the drive's own cache, and
            # only fcntl(fd, F_FULLFSYNC) flushes that. The checks kill processes only.
            os.fsync(f.fileno())
        os.replace(tmp_path, CHECKPOINT)
    except BaseException:
        # Never leave a half-written temp file behind; checkpoint.json itself is untouched.
        try:
            os.remove(tmp_path)
        except FileNotFoundError:
            pass
        raise


def run_agent(task, tools, call_model, execute_tool):
    """Run the agent loop on ``task`` and return its final state.

    ``call_model(tools=..., messages=...)`` returns a Messages-API-shaped response and
    ``execute_tool(name, input)`` returns the tool's result as a string. Each loop turn saves
    twice:

    - save point A, once a tool has been asked for and before it starts: ``pendingToolUse``
      holds ``{id, name, input}``, so a crash while the tool runs leaves a record of the
      dangling call for resume to reconcile;
    - save point B, once the tool's result is in ``messages``: ``pendingToolUse`` is back to
      ``None`` and ``turns`` counts the finished turn.

    As in the lesson's loop, the final ``end_turn`` answer is not appended to ``messages``.
    """
    state = {
        "version": 1,
        "task": task,
        "turns": 0,
        "tokensUsed": 0,
        "messages": [{"role": "user", "content": task}],
        "pendingToolUse": None,
    }

    response = call_model(tools=tools, messages=state["messages"])
    # The source lesson's loop forgets the first call's tokens; the reference counts every call.
    state["tokensUsed"] += response["usage"]["output_tokens"]

    while response["stop_reason"] == "tool_use":
        state["messages"].append({"role": "assistant", "content": response["content"]})

        block = next(b for b in response["content"] if b["type"] == "tool_use")
        # Save point A: a tool call is on record before the tool starts.
        state["pendingToolUse"] = {
            "id": block["id"],
            "name": block["name"],
            "input": block["input"],
        }
        save_checkpoint(state)

        result = execute_tool(block["name"], block["input"])

        state["messages"].append(
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": block["id"], "content": result}],
            }
        )
        state["turns"] += 1
        state["pendingToolUse"] = None

        # Save point B: the result of this turn's call is in messages; nothing is pending.
        save_checkpoint(state)

        response = call_model(tools=tools, messages=state["messages"])
        state["tokensUsed"] += response["usage"]["output_tokens"]

    return state
