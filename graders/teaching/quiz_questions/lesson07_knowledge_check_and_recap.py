"""Part 7's knowledge check: the questions that no earlier part asks.

``lessons/07_knowledge_check_and_recap``. The check itself, in order, is
`graders.teaching.quizzes.KNOWLEDGE_CHECK`.
"""

from __future__ import annotations

from ..quiz import Choice, Quiz
from . import BEYOND_SOURCE, SOURCE_LESSON

__all__ = ["QUESTIONS"]

QUESTIONS: tuple[Quiz, ...] = (
    Quiz(
        id="in_place_overwrite",
        source=SOURCE_LESSON,
        question=(
            "You are about to write save_checkpoint as json.dump(state, open('checkpoint.json', "
            "'w')): serialize the state straight over the same checkpoint.json. What is the "
            "problem with that?"
        ),
        choices=(
            Choice(
                "None while the machine stays up: a killed process still finishes the write it "
                "was in.",
                False,
                "A kill stops the process wherever it is, inside a write too. The harness's "
                "torn_write crash points do exactly that, and leave a file that ends mid-string.",
            ),
            Choice(
                "It is safe because json.dump hands the whole document to the system in one "
                "call.",
                False,
                "json.dump writes in pieces (a buffer at a time), and even a single write() can be "
                "cut short. Part 3 of this lesson tears one for real.",
            ),
            Choice(
                "A kill mid-write leaves a half-written file, and the previous save is already "
                "gone from the disk.",
                True,
                "open(..., 'w') empties checkpoint.json before the first new byte goes in, so "
                "until the last byte is written the only copy of the scene is a prefix of a JSON "
                "document. Nothing older is left to fall back on: the task starts over.",
            ),
            Choice(
                "Only the save in progress is lost: the previous one stays until the new one is "
                "complete.",
                False,
                "That is what temp + rename gives you. Writing in place, the previous save is the "
                "very file being emptied and rewritten.",
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
                "Once the model has named a tool, before the tool starts.",
                True,
                "From the moment the tool starts until save point B records its result, the "
                "checkpoint on disk names the call in flight.",
            ),
            Choice(
                "After the tool returns and before its result is appended to messages.",
                False,
                "Too late: a crash while the tool runs comes before this save, so the call leaves "
                "no mark.",
            ),
            Choice(
                "Before each model call, so that the request the model gets is on disk.",
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
                "It carries on from turn 3: turns says two ran, and the model recalls the rest.",
                False,
                "The model keeps nothing between calls: each request carries the whole "
                "conversation, and that conversation was messages.",
            ),
            Choice(
                "It starts over: the model asks for tool 1 again, on top of the first run's "
                "effects.",
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
        id="a_only_after_result",
        question=(
            "A loop saves only at save point A. Tool 2 finishes, its result is recorded in "
            "memory, and the process is killed during the next model call. What does resume do?"
        ),
        choices=(
            Choice(
                "It carries on after tool 2: the save at point A holds the tool's result.",
                False,
                "Save point A runs before the tool: it records the call, never its result. The "
                "result was only ever in memory.",
            ),
            Choice(
                "It starts the task over: an A-only loop has nothing on disk yet.",
                False,
                "Save point A of each turn did write a checkpoint; the newest one is from just "
                "before tool 2 ran.",
            ),
            Choice(
                "It refuses the file: a checkpoint with pendingToolUse set is torn.",
                False,
                "A set pendingToolUse is a complete, readable checkpoint: it says a call was "
                "started. Torn means the file itself is cut off.",
            ),
            Choice(
                "It finds tool 2 still pending, and runs it a second time.",
                True,
                "Nothing after point A recorded the result, so the checkpoint still says tool 2 is "
                "in flight. Resume must treat it as unfinished, and a call that already ran (and "
                "changed the world) runs a second time. Saving only at A trades the B-only blind "
                "spot for duplicate calls.",
            ),
        ),
    ),
    Quiz(
        id="temp_same_directory",
        question="Why must the temp file be written in the same directory as checkpoint.json?",
        choices=(
            Choice(
                "Because /tmp is wiped at every reboot, so the temp file could vanish first.",
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
                "A rename works only within a single filesystem, and /tmp may well be on "
                "another one.",
                True,
                "os.replace only repoints a directory entry at a file the same filesystem holds. "
                "Across filesystems it fails (EXDEV), and shutil.move falls back to a copy that "
                "can tear like any write. tempfile.mkstemp(dir=...) keeps the temp file beside "
                "the checkpoint.",
            ),
            Choice(
                "So that resume finds leftover temp files beside checkpoint.json and reads them.",
                False,
                "Resume never reads a temp file: only a complete save renamed into place counts. "
                "At most it sweeps stale ones away.",
            ),
        ),
    ),
    Quiz(
        id="finished_results_kept",
        source=BEYOND_SOURCE,
        question=(
            "A turn asks for three tools. Why does the loop save after each tool returns, "
            "rather than only at save point B?"
        ),
        choices=(
            Choice(
                "So that a crash before save point B loses none of the finished calls' results.",
                True,
                "A result held in memory dies with the process; killed while tool 3 runs, resume "
                "would run tools 1 and 2 again (a second email, a second charge). Saved as it "
                "comes, each result is reused instead.",
            ),
            Choice(
                "Because the API wants each tool_result sent back as soon as it exists.",
                False,
                "The API wants every result of the turn in the one user message after the "
                "assistant's; nothing is sent to the model until save point B.",
            ),
            Choice(
                "So that pendingToolUse always lists just one call, as the one-call loop does.",
                False,
                "pendingToolUse lists every call of the turn from save point A to B; the saves in "
                "between add each finished call's result to its entry.",
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
                "Yes: a checkpoint is cheap insurance, so more of them cannot hurt.",
                False,
                "'Add complexity only when it demonstrably improves outcomes' (Building "
                "Effective AI Agents). Saves that are never read are overhead, and part 6 "
                "measures that they are not free.",
            ),
            Choice(
                "Probably not: a rerun costs three seconds, and the saves are rarely read. "
                "Measure.",
                True,
                "Checkpoints pay off for long tasks, where a crash is expensive. For seconds of "
                "work, starting over is cheaper than the code and the disk writes (mind side "
                "effects: a tool that is not safe to run twice makes starting over costly too).",
            ),
            Choice(
                "Only at save point B: that halves the cost and keeps what matters most.",
                False,
                "B alone is the blind spot this lesson shows: a crash while a tool runs leaves no "
                "mark of the call. If you checkpoint at all, save at both points.",
            ),
        ),
    ),
)
