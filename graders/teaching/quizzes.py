"""The lesson's quiz questions, by id, and the knowledge check's order."""

from __future__ import annotations

from .quiz import Choice, Quiz

__all__ = ["QUIZZES", "KNOWLEDGE_CHECK", "SOURCE_QUESTION"]

_SOURCE = "the source lesson's own question"
_BEYOND = "beyond the source lesson"

_QUIZ_LIST = [
    Quiz(
        id="in_place_overwrite",
        source=_SOURCE,
        question=(
            "You are about to write save_checkpoint as json.dump(state, open('checkpoint.json', "
            "'w')): serialize the state and write it straight over the same checkpoint.json. "
            "What is the problem with that?"
        ),
        choices=(
            Choice(
                "Nothing: json.dump writes the whole document in one go, so the file is always "
                "either the old save or the new one.",
                False,
                "Writing a file is not one atomic step: open(..., 'w') empties checkpoint.json at "
                "once, and the bytes follow a buffer at a time. The torn write in part 3 stops a "
                "process part-way and leaves a prefix of the document on disk.",
            ),
            Choice(
                "A process killed mid-write leaves checkpoint.json half-written: neither the old "
                "save nor the new one, so resume cannot parse it, and there is no older copy to "
                "fall back on.",
                True,
                "Opening for writing truncates the only copy of the scene; until the last byte is "
                "written, a crash leaves torn JSON. The old save is already gone, so the task can "
                "only start over. Write a temp file in the same directory and os.replace it over "
                "checkpoint.json instead.",
            ),
            Choice(
                "It is too slow: every save rewrites the whole conversation.",
                False,
                "Rewriting the whole history on each save does cost something (part 5 measures "
                "it), but that is a cost, not the failure the question is after: a crash "
                "mid-write destroys the checkpoint.",
            ),
            Choice(
                "It only goes wrong on a power loss; a killed process always finishes its "
                "write first.",
                False,
                "A killed process stops wherever it is, even inside a write: the harness's "
                "torn_write_save_n crash points do exactly that and leave invalid JSON. (A power "
                "loss can do even worse; see Going deeper.)",
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
                "A checkpoint whose pendingToolUse names tool 2.",
                False,
                "Only save point A writes pendingToolUse, and a B-only loop never reaches one: "
                "nothing about call 2 was saved before the tool started.",
            ),
            Choice(
                "The checkpoint save point B wrote after tool 1: it knows nothing about call 2.",
                True,
                "The last save is the one after tool 1's result was recorded. Call 2 leaves no "
                "trace on disk, so resume cannot tell that a tool was running, and asks the model "
                "again: tool 2 runs twice (the ledger shows it).",
            ),
            Choice(
                "Nothing at all: the process died before it could save.",
                False,
                "It died before saving anything about call 2, but save point B of turn 1 already "
                "wrote a complete checkpoint. Killed while tool 1 ran, a B-only loop would leave "
                "nothing.",
            ),
            Choice(
                "Torn JSON.",
                False,
                "No save was in progress while the tool ran, so there was nothing to tear; torn "
                "JSON comes from a crash in the middle of an in-place write.",
            ),
        ),
    ),
    Quiz(
        id="tokens_used_missing",
        question=(
            "A checkpoint has every field but tokensUsed. The loop resumes from it. What goes "
            "wrong?"
        ),
        choices=(
            Choice(
                "Resume refuses to load it.",
                False,
                "Refusing is what resume does on a version it does not know. Without tokensUsed "
                "it loads fine and carries on, which is the trouble: its decisions are wrong.",
            ),
            Choice(
                "The count restarts at zero, so compaction is judged against too small a total "
                "and runs late or never.",
                True,
                "The compaction threshold fires off tokensUsed. Counted from zero it ignores every "
                "token spent before the crash, and re-estimating needs the usage of every past "
                "response, which is usually gone.",
            ),
            Choice(
                "The model forgets what happened earlier.",
                False,
                "What the model knows is messages, and messages are still there. tokensUsed is "
                "the harness's own bookkeeping.",
            ),
            Choice(
                "The max-turn cap fires late.",
                False,
                "The cap counts turns, not tokens: that is what happens when turns is missing.",
            ),
        ),
    ),
    Quiz(
        id="pending_tool_use_for",
        question="Which field does Lesson 3's resume reconcile against, and which save writes it?",
        choices=(
            Choice(
                "messages, written at save point B.",
                False,
                "messages holds the conversation; after a crash between A and B its last "
                "message names a tool, but only pendingToolUse says, in a slot of its own, that "
                "the call is unfinished.",
            ),
            Choice(
                "pendingToolUse, written at save point A, before the tool runs.",
                True,
                "Save point A records {id, name, input} of the call the model just named, then "
                "the tool runs. Killed in that window, the checkpoint says exactly which call "
                "was in flight; resume can check whether it ran.",
            ),
            Choice(
                "turns, written at both save points.",
                False,
                "turns says how many turns have finished; it cannot say which call was started "
                "and not finished.",
            ),
        ),
    ),
    Quiz(
        id="save_point_a_where",
        question="Where in a loop turn does save point A go?",
        choices=(
            Choice(
                "Right after the model names a tool, before the tool runs, with pendingToolUse "
                "set to the call.",
                True,
                "That closes the window: from the moment the tool starts until its result is "
                "saved at point B, the checkpoint on disk names the call in flight.",
            ),
            Choice(
                "Right after the tool returns, before its result is appended to messages.",
                False,
                "Too late: a crash while the tool runs happens before this save, so the call "
                "leaves no trace. (The harness's fixtures include exactly this mistake.)",
            ),
            Choice(
                "Before each model call.",
                False,
                "Before a model call the last tool result is already recorded: that is save "
                "point B's moment. A save here says nothing about the tool the model is about to "
                "name.",
            ),
        ),
    ),
    Quiz(
        id="messages_dropped",
        question=(
            "A checkpoint keeps only version, task, turns, tokensUsed and pendingToolUse, to "
            "stay small. What does resume do with it after two tool calls have run?"
        ),
        choices=(
            Choice(
                "It carries on from turn 3, because turns says 2.",
                False,
                "The counter says two turns ran, but the model has no memory of its own: "
                "everything it knows about them is the messages array, which is gone.",
            ),
            Choice(
                "It starts the task from nothing: the model calls the first tool again, while "
                "the side effects of the first run remain.",
                True,
                "Without messages, resume can only hand the model the task. The model starts "
                "over and names tool 1 again; the ledger shows each tool run twice. messages is "
                "the largest field and the one you cannot skip.",
            ),
            Choice(
                "It refuses to load the checkpoint.",
                False,
                "A reference resume refuses an unknown version; a missing messages field is "
                "worse, because nothing stops it from carrying on with an empty scene.",
            ),
        ),
    ),
    Quiz(
        id="temp_same_directory",
        question="Why must the temp file be written in the same directory as checkpoint.json?",
        choices=(
            Choice(
                "So that a crash leaves the temp file where the student can find it.",
                False,
                "Leftovers are a nuisance, not the reason: the reference even deletes its temp "
                "file when the save fails.",
            ),
            Choice(
                "A rename is atomic only within one filesystem; /tmp may be another one, and a "
                "rename across filesystems fails (EXDEV) or, through shutil.move, becomes a copy "
                "that can tear.",
                True,
                "os.replace only repoints a directory entry at a file the same filesystem already "
                "holds. The checkpoint's own directory is on the checkpoint's filesystem; "
                "tempfile.mkstemp(dir=...) puts the temp file there.",
            ),
            Choice(
                "os.replace only accepts file names without a directory part.",
                False,
                "os.replace takes any two paths; whether it is atomic depends on both being on "
                "one filesystem.",
            ),
        ),
    ),
    Quiz(
        id="replace_not_rename",
        source=_BEYOND,
        question="Why does the reference call os.replace rather than os.rename?",
        choices=(
            Choice(
                "os.replace is faster.",
                False,
                "Both make the same system call on POSIX; speed is not the difference.",
            ),
            Choice(
                "On Windows os.rename fails when checkpoint.json already exists; os.replace "
                "replaces it on every platform.",
                True,
                "From the second save on, the target always exists. On POSIX both replace it "
                "atomically; os.replace says what is meant everywhere (even it can fail on "
                "Windows while another process holds the file open).",
            ),
            Choice(
                "os.rename is not atomic on Linux.",
                False,
                "On Linux rename(2) replaces the target atomically; os.rename calls it.",
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
                "None: temp + rename is atomic.",
                False,
                "The rename is atomic as the running system sees it. What reaches the disk, and "
                "in which order, is another matter until fsync says so.",
            ),
            Choice(
                "The process being killed in the middle of the save.",
                False,
                "That is the crash temp + rename is made for: the harness kills saves part-way "
                "and checkpoint.json stays the previous complete save.",
            ),
            Choice(
                "A power loss soon after the save: the rename may reach the disk before the "
                "temp file's bytes, leaving an empty or partial checkpoint.json.",
                True,
                "A killed process leaves the page cache behind and the OS writes it out; a power "
                "loss does not. fsync the temp file before the rename, and the directory after "
                "it, to make the new save durable (the 2009 ext4 zero-length files; Pillai et "
                "al., OSDI 2014).",
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
                "Claude Code's checkpoints are an older design.",
                False,
                "Neither is more modern: each fits what it serves.",
            ),
            Choice(
                "They serve different things: Claude Code lets a person rewind a session they "
                "are in; this course's checkpoints let an unattended task survive a crash "
                "between a tool being named and its result being recorded.",
                True,
                "With a person in the loop, 'the user said something' is the natural unit. With "
                "nobody watching, a crash can land inside a turn, so the turn splits into save "
                "points A and B. How often to save depends on what the checkpoint is for.",
            ),
            Choice(
                "Saving per user prompt is enough for any agent, so two saves per turn is waste.",
                False,
                "An unattended task may run many turns after one prompt; a crash in the middle "
                "would lose them all, and leave a tool call in flight with no record of it.",
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
                "Yes, always: more checkpoints are always safer.",
                False,
                "'Add complexity only when it demonstrably improves outcomes' (Building "
                "Effective AI Agents). Saves that are never read are pure overhead.",
            ),
            Choice(
                "Probably not: a crash costs a three-second rerun, and the saves would almost "
                "never be read. Measure before adding the machinery.",
                True,
                "Checkpoints pay off for long tasks where a crash is expensive and re-running "
                "tools has side effects. For a few seconds of work, starting over is cheaper "
                "than the code and the disk writes. (Mind side effects: if a tool is not safe "
                "to run twice, starting over has a cost too.)",
            ),
            Choice(
                "Only at save point B, to halve the cost.",
                False,
                "B alone is the blind spot this lesson warns about: a crash while a tool runs "
                "leaves no trace of the call. If you checkpoint at all, save at both points.",
            ),
        ),
    ),
]

#: Every quiz question, by id.
QUIZZES: dict[str, Quiz] = {q.id: q for q in _QUIZ_LIST}

#: The source lesson's own question.
SOURCE_QUESTION = "in_place_overwrite"

#: The knowledge check at the end of the lesson, in order: the source's question first.
KNOWLEDGE_CHECK: tuple[str, ...] = (
    "in_place_overwrite",
    "messages_dropped",
    "save_point_a_where",
    "pending_tool_use_for",
    "temp_same_directory",
    "short_task_cost",
)
