"""Level 4, fixed: the agent loop when one model turn asks for several tools at once.

The Messages API lets one response hold several ``tool_use`` blocks; each needs its
``tool_result``, all of them in the next user message. Level 2's loop ran only the first block.
This reference runs every block, and keeps the checkpoint honest while it does:

1. Save point A lists every call of the turn: ``pendingToolUse`` is a list of
   ``{"id", "name", "input"}``, one per block in block order, saved before the first tool runs.
2. When a call finishes, its result is kept in its own entry (``"result"``) and saved before the
   next tool starts, so a crash during tool 3 leaves tools 1 and 2 on disk with their results.
3. Save point B appends ONE user message with a ``tool_result`` for every block (in block order,
   a habit: the API pairs each result with its call by ``tool_use_id``), and sets
   ``pendingToolUse`` back to ``None``.

``save_checkpoint`` is Level 2's atomic save, unchanged.
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

    Each turn in which the model asks for tools saves:

    - save point A, before the first tool runs: ``pendingToolUse`` lists every call of the turn,
      ``[{"id", "name", "input"}, ...]`` in the order of the ``tool_use`` blocks;
    - after each call but the last, the call's entry gains ``"result"`` (the string the tool
      returned) and the state is saved again, before the next tool starts;
    - save point B, once every result is in: one user message holding a ``tool_result`` per
      block, in block order; ``pendingToolUse`` back to ``None``; ``turns`` counts the turn.

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
    state["tokensUsed"] += response["usage"]["output_tokens"]

    while response["stop_reason"] == "tool_use":
        state["messages"].append({"role": "assistant", "content": response["content"]})

        blocks = [b for b in response["content"] if b["type"] == "tool_use"]
        # Save point A: every call of this turn is on record before the first one starts.
        state["pendingToolUse"] = [
            {"id": b["id"], "name": b["name"], "input": b["input"]} for b in blocks
        ]
        save_checkpoint(state)

        for position, entry in enumerate(state["pendingToolUse"]):
            entry["result"] = execute_tool(entry["name"], entry["input"])
            if position < len(blocks) - 1:
                # A finished call is kept with its result before the next call starts.
                save_checkpoint(state)

        # Save point B: one user message with every result, in the order of the blocks.
        state["messages"].append(
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": e["id"], "content": e["result"]}
                    for e in state["pendingToolUse"]
                ],
            }
        )
        state["turns"] += 1
        state["pendingToolUse"] = None
        save_checkpoint(state)

        response = call_model(tools=tools, messages=state["messages"])
        state["tokensUsed"] += response["usage"]["output_tokens"]

    return state
