"""The lesson's quiz questions, by id, the knowledge check's order, and each student's order.

Every wrong answer is a misconception someone really holds, and every answer says why it is
right or wrong. The options are authored in one order (`AUTHORED`); each student sees them in an
order of their own (`QUIZZES`), shuffled with a seed taken from their user name, so that the same
notebook shows the same order every time it runs, and letters cannot be passed around. Set
``CHECKPOINT_LAB_QUIZ_SEED`` to choose the seed (``authored`` keeps the authored order).
"""

from __future__ import annotations

import getpass
import os
import random

from .quiz import Choice, Quiz

__all__ = [
    "QUIZZES",
    "AUTHORED",
    "KNOWLEDGE_CHECK",
    "SOURCE_QUESTION",
    "SEED_ENV",
    "student_seed",
    "shuffled",
    "quizzes_for",
]

#: The environment variable that sets the shuffling seed; ``authored`` turns shuffling off.
SEED_ENV = "CHECKPOINT_LAB_QUIZ_SEED"

_SOURCE = "the source lesson's own question"
_BEYOND = "beyond the source lesson"

_QUIZ_LIST = [
    Quiz(
        id="in_place_overwrite",
        source=_SOURCE,
        question=(
            "You are about to write save_checkpoint as json.dump(state, open('checkpoint.json', "
            "'w')): serialize the state straight over the same checkpoint.json. What is the "
            "problem with that?"
        ),
        choices=(
            Choice(
                "None while the machine stays up: a killed process still finishes the write it "
                "was in the middle of, then exits.",
                False,
                "A kill stops the process wherever it is, inside a write too. The harness's "
                "torn_write crash points do exactly that, and leave a file that ends mid-string.",
            ),
            Choice(
                "None: json.dump hands the whole document to the operating system in one call, "
                "so it lands whole.",
                False,
                "json.dump writes in pieces (a buffer at a time), and even a single write() can be "
                "cut short. Part 3 of this lesson tears one for real.",
            ),
            Choice(
                "A kill mid-write leaves a half-written file that resume cannot parse, and the "
                "old save is already gone.",
                True,
                "open(..., 'w') empties checkpoint.json before the first new byte goes in, so "
                "until the last byte is written the only copy of the scene is a prefix of a JSON "
                "document. Nothing older is left to fall back on: the task starts over.",
            ),
            Choice(
                "It only loses the save in progress: the previous save stays readable until the "
                "new one is complete.",
                False,
                "That is what temp + rename gives you. Writing in place, the previous save is the "
                "very file being emptied and rewritten.",
            ),
        ),
    ),
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
    Quiz(
        id="tokens_used_missing",
        question=(
            "A checkpoint has every field but tokensUsed. The loop resumes from it. What is "
            "lost?"
        ),
        choices=(
            Choice(
                "Nothing that matters: the spend can simply be counted again from messages after "
                "the restart, token by token.",
                False,
                "What can be recounted from messages is the context's size (what the next request "
                "will send). The running spend is the sum of every past response's usage, and "
                "those figures are gone with the process.",
            ),
            Choice(
                "The running spend: it restarts at zero, so a budget or threshold judged on it "
                "fires late or never.",
                True,
                "tokensUsed adds up output_tokens over the run. Counted from zero it forgets "
                "everything spent before the crash. (In practice compaction is usually judged on "
                "the context size, the latest input_tokens plus the cache fields, which can be "
                "recounted; the spend cannot.)",
            ),
            Choice(
                "The conversation: the model no longer knows what it did before the crash.",
                False,
                "What the model knows is messages, and messages is still there. tokensUsed is the "
                "harness's own bookkeeping.",
            ),
            Choice(
                "The file itself: resume refuses it, as it refuses a version it does not know.",
                False,
                "Refusing is for an unknown version. Without tokensUsed resume loads the file "
                "and carries on, which is the trouble: its bookkeeping is wrong.",
            ),
        ),
    ),
    Quiz(
        id="pending_tool_use_for",
        question=(
            "Which field does resume reconcile a dangling tool call against, and which save "
            "writes it?"
        ),
        choices=(
            Choice(
                "messages, written at save point B: its last message names the tool.",
                False,
                "After a crash between A and B the last message names a tool, but messages was "
                "last saved at B of the previous turn; only pendingToolUse says, in a slot of its "
                "own, that a call was started and not recorded.",
            ),
            Choice(
                "turns, written at both save points: it tells which calls have finished.",
                False,
                "turns counts finished turns; it cannot say which call was started and not "
                "finished.",
            ),
            Choice(
                "pendingToolUse, written at save point A, before the tool starts.",
                True,
                "Save point A records {id, name, input} of the call just named, then the tool "
                "runs. Killed in that window, the checkpoint says which call was in flight, and "
                "resume can find out whether it ran.",
            ),
        ),
    ),
    Quiz(
        id="save_point_a_where",
        question="Where in a loop turn does save point A go?",
        choices=(
            Choice(
                "Once the model has named a tool, before that tool starts, with pendingToolUse "
                "set.",
                True,
                "From the moment the tool starts until save point B records its result, the "
                "checkpoint on disk names the call in flight.",
            ),
            Choice(
                "After the tool returns and before its result is appended to messages.",
                False,
                "Too late: a crash while the tool runs comes before this save, so the call leaves "
                "no mark. (The harness's fixtures include exactly this mistake.)",
            ),
            Choice(
                "Before each model call, so that the request the model receives is on disk.",
                False,
                "Before a model call the last tool result is already recorded: that is save "
                "point B's moment. It says nothing about the tool the model is about to name.",
            ),
        ),
    ),
    Quiz(
        id="messages_dropped",
        question=(
            "A checkpoint keeps version, task, turns, tokensUsed and pendingToolUse but not "
            "messages, to stay small. Two tool calls had run. What does resume do?"
        ),
        choices=(
            Choice(
                "It carries on from turn 3: turns says two turns ran, and the model remembers the "
                "rest of the work.",
                False,
                "The model keeps nothing between calls: each request carries the whole "
                "conversation, and that conversation was messages.",
            ),
            Choice(
                "It starts over: the model asks for tool 1 again, while the first run's effects "
                "remain.",
                True,
                "With no conversation to send, resume can only hand the model the task. The "
                "model begins again and names tool 1; the ledger shows each tool run twice. "
                "messages is the largest field and the one you cannot skip.",
            ),
            Choice(
                "It refuses to load: the protocol requires messages, as it requires version.",
                False,
                "Nothing stops it: an empty scene is still something to run. That is worse than "
                "a refusal, because the restart looks like a resume.",
            ),
        ),
    ),
    Quiz(
        id="temp_same_directory",
        question="Why must the temp file be written in the same directory as checkpoint.json?",
        choices=(
            Choice(
                "Because /tmp is wiped on every reboot, so a temp file kept there could vanish "
                "before its rename happens.",
                False,
                "The rename happens a moment after the write, not after a reboot. The real "
                "problem with /tmp is that it may be another filesystem.",
            ),
            Choice(
                "So that the renamed file keeps checkpoint.json's permissions and owner.",
                False,
                "A rename keeps the temp file's own permissions (mkstemp makes it 0600). That is "
                "worth knowing, but it is not why the directory matters.",
            ),
            Choice(
                "A rename works within one filesystem; /tmp may be another, so the rename fails "
                "or becomes a copy.",
                True,
                "os.replace only repoints a directory entry at a file the same filesystem holds. "
                "Across filesystems it fails (EXDEV), and shutil.move falls back to a copy that "
                "can tear like any write. tempfile.mkstemp(dir=...) keeps the temp file beside "
                "the checkpoint.",
            ),
        ),
    ),
    Quiz(
        id="replace_not_rename",
        source=_BEYOND,
        question="Why does the reference call os.replace rather than os.rename?",
        choices=(
            Choice(
                "os.replace also fsyncs the new file, so the save survives a power cut as well.",
                False,
                "Neither call fsyncs anything. Surviving a power cut takes an explicit fsync of "
                "the temp file before the rename and of the directory after it (part 4).",
            ),
            Choice(
                "On Windows os.rename fails when the target exists; os.replace overwrites it there "
                "too.",
                True,
                "From the second save on, checkpoint.json always exists. On POSIX both calls are "
                "rename(2), atomic. On Windows os.replace does replace the target, though it is "
                "not documented as atomic there and fails while another process holds the file "
                "open.",
            ),
            Choice(
                "os.rename is not atomic on Linux, while os.replace swaps the new file in over the "
                "old one in one step.",
                False,
                "On Linux both call rename(2), which replaces the target atomically.",
            ),
        ),
    ),
    Quiz(
        id="power_loss",
        source=_BEYOND,
        question=(
            "A save writes a temp file and os.replace-s it over checkpoint.json, with no fsync. "
            "Which crash can still lose the checkpoint?"
        ),
        choices=(
            Choice(
                "A kill while the temp file is written: the kill tears checkpoint.json as well.",
                False,
                "That is the crash temp + rename is made for: the harness tears the temp file, "
                "and checkpoint.json stays the previous complete save.",
            ),
            Choice(
                "None: os.replace makes the operating system flush the data before it renames.",
                False,
                "A rename says nothing about when data reaches the disk. Without fsync the "
                "rename may be on disk before the bytes it points at.",
            ),
            Choice(
                "A power cut soon after: the rename may reach the disk before the temp file's "
                "bytes.",
                True,
                "A killed process leaves the page cache behind and the OS writes it out; a power "
                "cut does not. fsync the temp file before the rename and the directory after it "
                "(on macOS, fsync leaves data in the drive's cache: fcntl F_FULLFSYNC flushes "
                "it). See the 2009 ext4 zero-length files and Pillai et al., OSDI 2014.",
            ),
        ),
    ),
    Quiz(
        id="claude_code_unit",
        question=(
            "Claude Code creates a checkpoint at every user prompt; this course saves twice per "
            "loop turn. Why the difference?"
        ),
        choices=(
            Choice(
                "Claude Code's checkpoints also capture what bash commands changed, so one per "
                "prompt suffices.",
                False,
                "They do not: Claude Code's checkpoints track the edits made through its file "
                "tools, not the side effects of bash commands, and they are for rewinding, not "
                "for crash recovery.",
            ),
            Choice(
                "They serve different ends: rewinding a session a person is in, versus surviving "
                "a crash unattended.",
                True,
                "With a person present, a new prompt is the natural place to mark. With nobody "
                "present, a crash can land inside a turn, so the turn gets two save points. How "
                "often to save follows from what the checkpoint is for.",
            ),
            Choice(
                "Per-prompt checkpoints are an older design, which per-turn saves have since "
                "replaced in newer agents.",
                False,
                "Neither replaces the other; each fits what it is for.",
            ),
        ),
    ),
    Quiz(
        id="short_task_cost",
        question=(
            "Your agent finishes every task in four turns and about three seconds. Should it "
            "save two checkpoints per turn?"
        ),
        choices=(
            Choice(
                "Yes: more checkpoints are always safer, and a save costs next to nothing.",
                False,
                "'Add complexity only when it demonstrably improves outcomes' (Building "
                "Effective AI Agents). Saves that are never read are overhead, and part 5 "
                "measures that they are not free.",
            ),
            Choice(
                "Probably not: a rerun costs three seconds, and the saves would rarely be read. "
                "Measure first.",
                True,
                "Checkpoints pay off for long tasks, where a crash is expensive. For seconds of "
                "work, starting over is cheaper than the code and the disk writes (mind side "
                "effects: a tool that is not safe to run twice makes starting over costly too).",
            ),
            Choice(
                "Only at save point B: that halves the cost, and save point B holds everything "
                "that really matters.",
                False,
                "B alone is the blind spot this lesson shows: a crash while a tool runs leaves no "
                "mark of the call. If you checkpoint at all, save at both points.",
            ),
        ),
    ),
]

#: Every quiz question, by id, with its options in the order they were written.
AUTHORED: dict[str, Quiz] = {q.id: q for q in _QUIZ_LIST}


def student_seed() -> str:
    """The seed of this student's option order: ``$CHECKPOINT_LAB_QUIZ_SEED``, else the user
    name."""
    seed = os.environ.get(SEED_ENV, "").strip()
    if seed:
        return seed
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no user name (some containers): one order for everybody
        return "student"


def shuffled(quiz: Quiz, seed: str) -> Quiz:
    """``quiz`` with its options in the order ``seed`` gives it (``"authored"``: unchanged).

    The order depends on the seed and the question's id only, so it is the same on every run.
    """
    if seed == "authored":
        return quiz
    choices = list(quiz.choices)
    random.Random(f"{seed}/{quiz.id}").shuffle(choices)
    return Quiz(id=quiz.id, question=quiz.question, choices=tuple(choices), source=quiz.source)


def quizzes_for(seed: str) -> dict[str, Quiz]:
    """Every question, by id, in the order ``seed`` gives its options."""
    return {quiz_id: shuffled(quiz, seed) for quiz_id, quiz in AUTHORED.items()}


#: Every quiz question, by id, in this student's order (see `student_seed`).
QUIZZES: dict[str, Quiz] = quizzes_for(student_seed())

#: The source lesson's own question.
SOURCE_QUESTION = "in_place_overwrite"

#: The knowledge check at the end of the lesson, in order: the source's question first.
KNOWLEDGE_CHECK: tuple[str, ...] = (
    "in_place_overwrite",
    "messages_dropped",
    "save_point_a_where",
    "a_only_after_result",
    "pending_tool_use_for",
    "temp_same_directory",
    "short_task_cost",
)
