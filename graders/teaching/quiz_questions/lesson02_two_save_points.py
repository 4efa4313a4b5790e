"""The quiz questions of Part 2 (``lessons/02_two_save_points``)."""

from __future__ import annotations

from ..quiz import Choice, Quiz

__all__ = ["QUESTIONS"]

QUESTIONS: tuple[Quiz, ...] = (
    Quiz(
        id="b_only_tool_window",
        question=(
            "A loop saves only at save point B. The process is killed while tool 2 is running. "
            "What does checkpoint.json hold?"
        ),
        choices=(
            Choice(
                "The save made after tool 1's result was recorded: nothing in it mentions call 2.",
                True,
                "The newest save is the one after turn 1. Call 2 left no mark on disk, so resume "
                "cannot tell a tool was running; it asks the model again and build_table runs "
                "twice (the ledger shows it).",
            ),
            Choice(
                "A checkpoint whose pendingToolUse names tool 2, since the model had already named "
                "it.",
                False,
                "The model did name it, in memory. Only a save writes memory to disk, and a B-only "
                "loop makes no save between naming a tool and recording its result.",
            ),
            Choice(
                "An empty file: the process held checkpoint.json open, and the kill cut it short.",
                False,
                "No save was running while the tool ran, so checkpoint.json was not open. The file "
                "is the last complete save.",
            ),
            Choice(
                "Torn JSON: the kill interrupts the save that runs alongside every tool call.",
                False,
                "Saves and tool calls take turns; nothing saves while a tool runs. Torn JSON needs "
                "a kill in the middle of an in-place save.",
            ),
        ),
    ),
    Quiz(
        id="a_only_after_result",
        question=(
            "A loop saves only at save point A. Tool 2 finishes, its result is recorded in "
            "memory, and the process is killed during the next model call. What does resume do?"
        ),
        choices=(
            Choice(
                "It carries on after tool 2, because the save at point A already holds the tool's "
                "result for it.",
                False,
                "Save point A runs before the tool: it records the call, never its result. The "
                "result was only ever in memory.",
            ),
            Choice(
                "It starts the task over: a loop that saves only at A has nothing on disk yet.",
                False,
                "Save point A of each turn did write a checkpoint; the newest one is from just "
                "before tool 2 ran.",
            ),
            Choice(
                "It refuses the file: a checkpoint with pendingToolUse set is a torn save.",
                False,
                "A set pendingToolUse is a complete, readable checkpoint: it says a call was "
                "started. Torn means the file itself is cut off.",
            ),
            Choice(
                "It sees pendingToolUse naming tool 2, cannot tell that it finished, and runs it "
                "again.",
                True,
                "Nothing after point A recorded the result, so the checkpoint still says tool 2 is "
                "in flight. Resume must treat it as unfinished, and a call that already ran (and "
                "changed the world) runs a second time. Saving only at A trades the B-only blind "
                "spot for duplicate calls.",
            ),
        ),
    ),
)
