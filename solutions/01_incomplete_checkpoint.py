"""Level 1, completed: a save that keeps all six fields of the checkpoint.

The starter saved only ``messages``. The five fields it left out, and what resume runs into
without each of them, are written up in ``solutions/01_incomplete_checkpoint.written_answers.md``.

This save still overwrites ``checkpoint.json`` in place: Level 1 is about *what* to save. *How*
to save so that a crash cannot tear the file (an atomic save) is Level 2; see
``solutions/02_two_latent_failures.py``.
"""

import json

MISSING_FIELDS = {"version", "task", "turns", "tokensUsed", "pendingToolUse"}


def save_checkpoint(state):
    """Write the six fields of ``state`` to ``checkpoint.json`` in the current directory."""
    checkpoint = {
        "version": state["version"],
        "task": state["task"],
        "turns": state["turns"],
        "tokensUsed": state["tokensUsed"],
        "messages": state["messages"],
        "pendingToolUse": state["pendingToolUse"],
    }
    with open("checkpoint.json", "w") as f:
        json.dump(checkpoint, f)
