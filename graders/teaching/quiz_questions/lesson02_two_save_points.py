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
                "The save made after tool 1's result was recorded, which says nothing at all of "
                "call 2.",
                True,
                "The newest save is the one after turn 1. Call 2 left no mark on disk, so resume "
                "cannot tell a tool was running; it asks the model again and build_table runs "
                "twice (the ledger shows it).",
            ),
            Choice(
                "A checkpoint whose pendingToolUse names tool 2, since the model had named it "
                "by then.",
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
                "Torn JSON: the save of tool 2's result had begun when the tool was killed.",
                False,
                "The save at B comes after the tool returns; killed while it runs, no save has "
                "begun. Torn JSON needs a kill in the middle of an in-place save.",
            ),
        ),
    ),
    Quiz(
        id="a_only_finished_run",
        question=(
            "A loop that saves only at save point A runs support-tickets to its end, with no "
            "crash. What does its last checkpoint.json say?"
        ),
        choices=(
            Choice(
                "That the last tool, build_table, is still in flight.",
                True,
                "The last save was save point A of turn 2, and nothing saved after build_table "
                "returned. A supervisor that restarts the loop from this file would run "
                "build_table again, although the task is done.",
            ),
            Choice(
                "That the task is done: the last save came at the end.",
                False,
                "An A-only loop saves before each tool and never after one, so nothing is saved "
                "at the end. (Neither loop of this lesson records \"done\": a real harness would.)",
            ),
            Choice(
                "That list_tickets is still in flight.",
                False,
                "list_tickets' call was named at the first save point A; the second save point A "
                "replaced it with build_table.",
            ),
        ),
    ),
)
