"""The lesson's loop, as the grader's own code: ``run_agent`` with both save points and an
atomic ``save_checkpoint``.

Levels 1 and 3 run the student's ``save_checkpoint`` with this ``run_agent``; Level 4 gives the
student this ``save_checkpoint`` in a locked cell. The grader needs no file of the repository
to grade (an installed wheel grades): ``tests/test_loop.py`` holds this copy to
``solutions/02_two_latent_failures.py``, the reference the students read, so the two cannot
drift apart. :func:`source` is the code a submission is joined with; :func:`bound_to` a
``run_agent`` that saves through another ``save_checkpoint``. Levels 3 and 4 import this loop
and this save (:func:`given_loop`, :func:`given_save`) rather than show them: they are Level 2's
answer, and a student opens those notebooks before passing Level 2.
"""

from __future__ import annotations

import inspect
import json
import os
import sys
import tempfile

__all__ = ["CHECKPOINT", "save_checkpoint", "run_agent", "source", "bound_to", "given_loop",
           "given_save"]

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


def source(*names: str) -> str:
    """The imports this module's loop needs, then the code of ``names`` (default: ``run_agent``),
    as text to run beside a student's code."""
    module = sys.modules[__name__]
    parts = ["import json\nimport os\nimport tempfile"]
    for name in names or ("run_agent",):
        value = getattr(module, name)
        parts.append(f"{name} = {value!r}" if isinstance(value, str)
                     else inspect.getsource(value).rstrip())
    return "\n\n\n".join(parts) + "\n"


def bound_to(save) -> object:
    """This ``run_agent``, saving through ``save`` instead of this module's ``save_checkpoint``."""
    namespace: dict = {"__name__": "lesson_loop"}
    exec(compile(source(), __file__, "exec"), namespace)  # noqa: S102 - the grader's own code
    namespace["save_checkpoint"] = save
    return namespace["run_agent"]


def given_loop(namespace: dict):
    """This ``run_agent``, saving through whatever ``save_checkpoint`` ``namespace`` (a
    notebook's ``globals()``) defines when it saves: Level 3's given loop."""

    def save(state):
        return namespace["save_checkpoint"](state)

    return bound_to(save)


def given_save():
    """This ``save_checkpoint``: Level 4's given atomic save."""
    return save_checkpoint
