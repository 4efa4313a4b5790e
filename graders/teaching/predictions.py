"""The predictions the lessons ask for before each crash they show, by id.

Each is a `graders.teaching.quiz.Quiz`: the question, the options (one is what really happens, the
others what people commonly expect), and why. `graders.teaching.predict` puts one on screen and
holds its answer back until the student has locked in a prediction and run the crash.

As with the quizzes, each student sees the options in an order of their own (`PREDICTIONS`,
shuffled by `graders.teaching.quiz_order` with the student's seed); `AUTHORED_PREDICTIONS` keeps
the order they were written in. No option gives the answer away by its length
(``tests/test_teaching_quiz.py`` counts).
"""

from __future__ import annotations

from .quiz import Choice, Quiz
from .quiz_order import shuffled, student_seed

__all__ = ["PREDICTIONS", "AUTHORED_PREDICTIONS", "predictions_for"]

_LIST = [
    # -- lesson 01: the scene in memory, and the six fields --------------------------------------
    Quiz(
        id="no_checkpoint",
        question=("This loop saves nothing. It is killed while its second tool runs. What can a "
                  "restarted process pick up from?"),
        choices=(
            Choice("From nothing: both tools had run, yet the task starts over from the top.", True,
                   "With no file on disk, the scene died with the process; the ledger still "
                   "shows list_tickets and build_table as really run."),
            Choice("From the second tool: the first tool's result is still known.", False,
                   "Known to whom? The result lived in the dead process's memory."),
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
            Choice("Loads both: the other five fields look as they do in version 1.", False,
                   "Looking the same is the trap: a newer format may mean something else by the "
                   "same names."),
            Choice("Refuses version 2; reads the one with no version as version 1.", False,
                   "Guessing is the misreading the field is there to prevent: no version, no way "
                   "to know the format."),
            Choice("Refuses both, and says why, before it reads anything else.", True,
                   "An unknown or missing version is a format resume cannot vouch for: it stops "
                   "with a clear message rather than misread the file."),
        ),
    ),
    Quiz(
        id="field_task",
        question="Resume is handed the checkpoint without task. What happens?",
        choices=(
            Choice("It refuses to load the file: it cannot tell what to do next.", False,
                   "The model's conversation is all there, so resume can carry on; what it "
                   "cannot do is say what it is carrying on with."),
            Choice("It asks the model what the task was, and fills it in.", False,
                   "The model can only guess from the conversation; nothing promises the first "
                   "message still states the task (after compaction it may not)."),
            Choice("It finishes the work, but cannot say which task it resumed.", True,
                   "Without task, the restarted harness can neither check that it is resuming "
                   "the right job nor tell anyone which job it is."),
            Choice("It starts the whole task over from the first turn.", False,
                   "The conversation is still in messages, so the model carries on from where it "
                   "was; only the harness's own record of the job is gone."),
        ),
    ),
    Quiz(
        id="field_turns",
        question=("long-migration makes eight tool calls; three turns had finished before the "
                  "crash. Resume runs with a cap of five turns, without turns. How many turns "
                  "will really have run when it stops?"),
        choices=(
            Choice("5: the cap still stops the task after five turns in all.", False,
                   "That is what the cap does when turns is in the checkpoint."),
            Choice("2: the cap fires early; the three turns are counted twice.", False,
                   "Nothing is counted twice: the count starts again at zero, so the cap "
                   "believes fewer turns ran than really did."),
            Choice("8: from zero, the cap allows five more, so it fires late.", True,
                   "Three turns ran before the crash and the restarted count begins at zero; "
                   "the cap of five lets the task run to its end, eight turns in all."),
        ),
    ),
    Quiz(
        id="field_tokens_used",
        question=("The compaction threshold is set just above the output tokens counted before "
                  "the crash. Resume runs without tokensUsed. When does compaction run?"),
        choices=(
            Choice("At the next turn, as it would with tokensUsed kept.", False,
                   "That needs the count from before the crash, which is what the missing field "
                   "held."),
            Choice("Never, in this task: the count restarts at zero.", True,
                   "Counted from zero, the total leaves out every output token before the "
                   "crash, so the threshold is not reached before the task ends."),
            Choice("At once: resume recounts every message from scratch.", False,
                   "A resume could re-estimate the output tokens from the assistant messages, "
                   "though not exactly; this one, like most, simply starts at zero."),
        ),
    ),
    Quiz(
        id="field_messages",
        question=("This checkpoint was saved after list_tickets' result was recorded. Resume "
                  "runs without messages. Which tools will have run twice?"),
        choices=(
            Choice("None: turns says one turn ran, so resume skips that turn.", False,
                   "turns is a count, not the conversation: the model sees only the messages it "
                   "is sent."),
            Choice("list_tickets: the model asks for it again.", True,
                   "With no conversation, resume can only hand the model the task, and the "
                   "model begins from the first step, on top of the first run's side effects."),
            Choice("build_table: resume runs the step that had not finished.", False,
                   "Resume cannot know which step was next: that knowledge was in messages."),
            Choice("Both: resume replays every call in the conversation.", False,
                   "There is no conversation to replay. build_table had not run before the "
                   "crash, so it runs once; only list_tickets runs twice."),
        ),
    ),
    Quiz(
        id="field_pending_tool_use",
        question=("This checkpoint was saved while build_table ran. Resume runs without "
                  "pendingToolUse. What happens?"),
        choices=(
            Choice("It sends the conversation on; the model rejects it.", True,
                   "The last message names build_table with no result after it. The Messages "
                   "API refuses such a conversation, and so does the fake model."),
            Choice("It runs build_table again, from the last message.", False,
                   "It could have, had it looked; without pendingToolUse this resume does not "
                   "know a call was in flight, and goes straight to the model."),
            Choice("Nothing goes wrong: build_table had finished by then.", False,
                   "Nobody knows whether it finished: the process died while it ran."),
            Choice("It asks the model to name the tool again.", False,
                   "The model is never asked: the request is refused first, because the "
                   "conversation it would be sent ends in a call with no result."),
        ),
    ),
    # -- lesson 02: the two save points ------------------------------------------------------------
    Quiz(
        id="b_only_runs_twice",
        question=("A loop saves only at save point B. It is killed while tool 2 (build_table) "
                  "runs, then resumed from checkpoint.json. How many times will build_table "
                  "have run when the task is done?"),
        choices=(
            Choice("Once: resume sees the call was cut short and finishes it.", False,
                   "Resume can only see what a save wrote, and no save happened between naming "
                   "build_table and running it."),
            Choice("Twice: resume does not know it ran; the model asks again.", True,
                   "The newest checkpoint is from after tool 1. Resume sends that conversation, "
                   "the model names build_table again, and it runs a second time."),
            Choice("Never to the end: the kill tore checkpoint.json.", False,
                   "No save was running while the tool ran, so nothing was torn."),
        ),
    ),
    Quiz(
        id="a_only_finished_runs_twice",
        question=("Now the loop saves only at save point A. It is killed while model call 3 is "
                  "in flight: build_table has finished, and its result is in memory. What does "
                  "resume, run from checkpoint.json, do with build_table?"),
        choices=(
            Choice("Runs it again: the checkpoint still names it as in flight.", True,
                   "The newest save is save point A of turn 2, and its pendingToolUse names "
                   "build_table. Nothing saved the result, so resume must treat the call as "
                   "unfinished, and runs it a second time."),
            Choice("Skips it: it had finished before the kill, and resume sees that.", False,
                   "Resume sees only what a save wrote, and the last save came before "
                   "build_table ran."),
            Choice("Reuses its result, which the save at A put in messages.", False,
                   "Save point A runs before the tool: the result was appended in memory only, "
                   "and no save wrote it."),
            Choice("Starts the whole task over, list_tickets first.", False,
                   "checkpoint.json is a complete save of turn 2, so resume carries on from it; "
                   "only the call it names runs again."),
        ),
    ),
    # -- lesson 03: the atomic save ---------------------------------------------------------------
    Quiz(
        id="torn_in_place",
        question=("The in-place save is killed part-way through the bytes of save 2. What does "
                  "checkpoint.json hold?"),
        choices=(
            Choice("Save 1, whole: the new bytes never reached it.", False,
                   "Opening the file for writing emptied it before the first new byte."),
            Choice("Save 2, whole: the kill waits for the write to end.", False,
                   "A kill stops the process wherever it is, in the middle of a write too."),
            Choice("The first part of save 2, and nothing of save 1.", True,
                   "The file was emptied when it was opened, then filled up to the kill; the "
                   "rest never came, and it does not parse, whatever its size."),
        ),
    ),
    Quiz(
        id="torn_atomic",
        question=("Now the save writes a temp file and renames it. It is killed part-way through "
                  "save 2, and once just before save 2's rename. What does checkpoint.json hold?"),
        choices=(
            Choice("Save 1, whole, both times; a temp file lies beside it.", True,
                   "The crash only reached the temp file. checkpoint.json changes in one step, "
                   "at the rename, which never happened."),
            Choice("Part of save 2 the first time, and save 1 the second time.", False,
                   "The part-written bytes are in the temp file, not in checkpoint.json."),
            Choice("Nothing either time: the old file was already removed by then.", False,
                   "A rename replaces the target in one step; until then the old file stays."),
        ),
    ),
    # -- lesson 04: power cuts --------------------------------------------------------------------
    Quiz(
        id="power_cut_empty",
        question=("Four saves write a temp file and rename it; they differ only in which fsyncs "
                  "they make: none, the file's, the folder's, or both. The power fails while tool "
                  "2 runs. Which saves can leave checkpoint.json empty?"),
        choices=(
            Choice("Only the one with no fsync: any fsync puts the bytes on disk.", False,
                   "A sync of the folder says nothing about the file's bytes: the rename can "
                   "still reach the disk before them."),
            Choice("No fsync, and the folder's only: the rename can land first.", True,
                   "Without the file's fsync before the rename, the disk may hold the new name "
                   "before the bytes it points at. The file's fsync alone cannot leave an empty "
                   "file (it can bring an older save back instead)."),
            Choice("None: os.replace is atomic, so the file is either old or new.", False,
                   "Atomic for running programs; a power cut is another matter. What reaches "
                   "the disk, and in which order, is up to the file system."),
            Choice("Every one but both: each of the others can lose its bytes.", False,
                   "The file's fsync alone does put the bytes on disk before the rename; what "
                   "it cannot promise is that the rename itself survives."),
        ),
    ),
    # -- lesson 05: several tool calls in one turn -----------------------------------------------
    Quiz(
        id="three_calls_killed_during_tool_3",
        question=("One turn asks for three tools, and the loop saves each result as its tool "
                  "returns. It is killed while tool 3 runs. What does pendingToolUse hold?"),
        choices=(
            Choice("One entry, tool 3's: the finished calls left the list.", False,
                   "Nothing leaves the list until save point B: resume needs the finished calls' "
                   "results, and their ids, to write the turn's one result message."),
            Choice("The three calls, and tools 1 and 2 along with their results.", True,
                   "Save point A listed all three; each finished call gained its result and was "
                   "saved before the next tool started. Resume reuses two results and "
                   "reconciles tool 3."),
            Choice("The three calls, none with a result: those wait for B.", False,
                   "That is the loop that loses finished results: killed here, resume would run "
                   "tools 1 and 2 again."),
            Choice("Nothing: results are written at save point B only.", False,
                   "pendingToolUse is set at save point A, before the first tool runs, and stays "
                   "set until B."),
        ),
    ),
    # -- lesson 08 (appendix): what real systems store ------------------------------------------
    Quiz(
        id="two_writers_fixed_name",
        question=("Two saves share the temp name checkpoint.json.tmp and interleave: A writes "
                  "half, B writes all of its own, A writes the rest, then each tries to rename. "
                  "What ends up in checkpoint.json?"),
        choices=(
            Choice("B's save, whole: the last writer wins.", False,
                   "B's rename even fails: A already moved the shared file, and what A moved no "
                   "longer holds A's bytes alone."),
            Choice("A's save, whole: it started first.", False,
                   "Starting first protects nothing: B's open emptied the file under A."),
            Choice("A mix of both saves' bytes.", True,
                   "B's open emptied the file A was writing; A went on at its old offset. A's "
                   "rename then puts the mixture in place."),
        ),
    ),
]

#: Every prediction, by id, with its options in the order they were written.
AUTHORED_PREDICTIONS: dict[str, Quiz] = {p.id: p for p in _LIST}


def predictions_for(seed: str) -> dict[str, Quiz]:
    """Every prediction, by id, in the order ``seed`` gives its options."""
    return {pid: shuffled(p, seed) for pid, p in AUTHORED_PREDICTIONS.items()}


#: Every prediction, by id, in this student's order (see `graders.teaching.quizzes`).
PREDICTIONS: dict[str, Quiz] = predictions_for(student_seed())
