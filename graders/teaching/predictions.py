"""The predictions the lessons ask for before each crash they show, by id.

Each is a `graders.teaching.quiz.Quiz`: the question, the options (one is what really happens, the
others what people commonly expect), and why. `graders.teaching.predict` puts one on screen and
holds its answer back until the student has locked in a prediction and run the crash.
"""

from __future__ import annotations

from .quiz import Choice, Quiz

__all__ = ["PREDICTIONS"]

_LIST = [
    # -- lesson 01: the scene in memory, and the six fields --------------------------------------
    Quiz(
        id="no_checkpoint",
        question=("This loop saves nothing. It is killed while its second tool runs. What can a "
                  "restarted process pick up from?"),
        choices=(
            Choice("From the second tool: the first one's result is still known.", False,
                   "Known to whom? The result lived in the dead process's memory."),
            Choice("From nothing: it starts the task over, though both tools ran.", True,
                   "With no file on disk, the scene died with the process; the ledger still "
                   "shows list_tickets and build_table as really run."),
            Choice("From the operating system, which keeps a dead process's memory.", False,
                   "The operating system frees a killed process's memory at once; only files "
                   "survive it."),
        ),
    ),
    Quiz(
        id="field_version",
        question=("Resume is handed this checkpoint with version set to 2, a format it does not "
                  "know, and then with no version at all. What does it do?"),
        choices=(
            Choice("Loads both: the other five fields look the same as in version 1.", False,
                   "Looking the same is the trap: a newer format may mean something else by the "
                   "same names."),
            Choice("Refuses both, and says why, before reading anything else.", True,
                   "An unknown or missing version is a format resume cannot vouch for: it stops "
                   "with a clear message rather than misread the file."),
            Choice("Refuses version 2, but loads the one with no version as version 1.", False,
                   "Guessing is the misreading the field is there to prevent: no version, no way "
                   "to know the format."),
        ),
    ),
    Quiz(
        id="field_task",
        question="Resume is handed the checkpoint without task. What happens?",
        choices=(
            Choice("It refuses to load: it does not know what to do.", False,
                   "The model's conversation is all there, so resume can carry on; what it "
                   "cannot do is say what it is carrying on with."),
            Choice("It finishes the work, but cannot say which task it resumed.", True,
                   "The restarted harness remembers nothing; the file is all it has. Without "
                   "task it cannot check it is resuming the right job, nor tell anyone which."),
            Choice("It asks the model what the task was, which fills the field in.", False,
                   "The model can only guess from the conversation; nothing promises the first "
                   "message still states the task (after compaction it may not)."),
        ),
    ),
    Quiz(
        id="field_turns",
        question=("long-migration makes eight tool calls; three turns had finished before the "
                  "crash. Resume runs with a cap of five turns, without turns. How many turns "
                  "will really have run when it stops?"),
        choices=(
            Choice("5: the cap still stops the task at five turns in all.", False,
                   "That is what the cap does with turns in the checkpoint."),
            Choice("2: the cap fires early, because the count is lost.", False,
                   "The count is not lost upward but reset to zero: the cap thinks fewer turns "
                   "ran than really did."),
            Choice("8: counting from zero, the cap allows five more, so it fires late.", True,
                   "Three turns ran before the crash and the restarted count begins at zero; "
                   "the cap of five lets the task run to its end, eight turns in all."),
        ),
    ),
    Quiz(
        id="field_tokens_used",
        question=("The compaction threshold is set just above what the run had spent before the "
                  "crash. Resume runs without tokensUsed. When does compaction run?"),
        choices=(
            Choice("At the next turn, as with tokensUsed kept.", False,
                   "That needs the spend before the crash, which is what the missing field held."),
            Choice("Never, in this task: the total restarts from zero.", True,
                   "Counted from zero, the running spend leaves out everything before the crash, "
                   "so the threshold is not reached before the task ends."),
            Choice("At once: resume counts every message again from scratch.", False,
                   "It could recount the context's size from messages, but the running spend is "
                   "the usage of past responses, which is gone."),
        ),
    ),
    Quiz(
        id="field_messages",
        question=("This checkpoint was saved after list_tickets' result was recorded. Resume "
                  "runs without messages. Which tools will have run twice?"),
        choices=(
            Choice("None: turns says one turn ran, so resume skips it.", False,
                   "turns is a count, not the conversation: the model sees only the messages it "
                   "is sent."),
            Choice("list_tickets: the model starts over and asks for it again.", True,
                   "With no conversation, resume can only hand the model the task, and the "
                   "model begins from the first step, on top of the first run's side effects."),
            Choice("build_table: resume runs the step that had not finished.", False,
                   "Resume cannot know which step was next: that knowledge was in messages."),
        ),
    ),
    Quiz(
        id="field_pending_tool_use",
        question=("This checkpoint was saved while build_table ran. Resume runs without "
                  "pendingToolUse. What happens?"),
        choices=(
            Choice("It runs build_table again, from the last message.", False,
                   "It could have, had it looked; without pendingToolUse this resume does not "
                   "know a call was in flight, and goes straight to the model."),
            Choice("It sends the conversation on; the model rejects it.", True,
                   "The last message names build_table with no result after it. The Messages "
                   "API refuses such a conversation, and so does the fake model."),
            Choice("Nothing goes wrong: build_table had already finished.", False,
                   "Nobody knows whether it finished: the process died while it ran."),
        ),
    ),
    # -- lesson 02: the two save points ------------------------------------------------------------
    Quiz(
        id="b_only_runs_twice",
        question=("A loop saves only at save point B. It is killed while tool 2 (build_table) "
                  "runs, then resumed from checkpoint.json. How many times will build_table "
                  "have run when the task is done?"),
        choices=(
            Choice("Once: resume sees the call was interrupted and finishes it.", False,
                   "Resume can only see what a save wrote, and no save happened between naming "
                   "build_table and running it."),
            Choice("Twice: resume does not know it ran, and the model asks again.", True,
                   "The newest checkpoint is from after tool 1. Resume sends that conversation, "
                   "the model names build_table again, and it runs a second time."),
            Choice("Never to completion: the checkpoint is torn.", False,
                   "No save was running while the tool ran, so nothing was torn."),
        ),
    ),
    # -- lesson 03: the atomic save ---------------------------------------------------------------
    Quiz(
        id="torn_in_place",
        question=("The in-place save is killed halfway through the bytes of save 2. What does "
                  "checkpoint.json hold?"),
        choices=(
            Choice("Save 1, whole: the new bytes never reached it.", False,
                   "Opening the file for writing emptied it before the first new byte."),
            Choice("The first half of save 2: unreadable JSON.", True,
                   "The file was emptied, then filled up to the kill; the rest never came."),
            Choice("Save 2, whole: the kill waits for the write to end.", False,
                   "A kill stops the process wherever it is, in the middle of a write too."),
        ),
    ),
    Quiz(
        id="torn_atomic",
        question=("Now the save writes a temp file and renames it. It is killed halfway through "
                  "save 2, and once just before save 2's rename. What does checkpoint.json hold?"),
        choices=(
            Choice("Save 1, whole, both times; the temp file lies beside it.", True,
                   "The crash only reached the temp file. checkpoint.json changes in one step, "
                   "at the rename, which never happened."),
            Choice("Half of save 2 the first time, save 1 the second.", False,
                   "The half-written bytes are in the temp file, not in checkpoint.json."),
            Choice("Nothing: the rename had already removed the old file.", False,
                   "A rename replaces the target in one step; until then the old file stays."),
        ),
    ),
    # -- lesson 04: going deeper -------------------------------------------------------------------
    Quiz(
        id="two_writers_fixed_name",
        question=("Two saves share the temp name checkpoint.json.tmp and interleave: A writes "
                  "half, B writes all of its own, A writes the rest, then each tries to rename. "
                  "What ends up in checkpoint.json?"),
        choices=(
            Choice("B's save, whole: the last writer wins.", False,
                   "B's rename even fails: A already moved the shared file, and what A moved no "
                   "longer holds A's bytes alone."),
            Choice("A mixture of A's and B's bytes in one file.", True,
                   "B's open emptied the file A was writing; A went on at its old offset. A's "
                   "rename then puts the mixture in place."),
            Choice("A's save, whole: it started first.", False,
                   "Starting first protects nothing: B's open emptied the file under A."),
        ),
    ),
]

#: Every prediction, by id.
PREDICTIONS: dict[str, Quiz] = {p.id: p for p in _LIST}
