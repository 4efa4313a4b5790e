# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Checkpoints · Part 4 of 6: going deeper
#
# *Beyond the source lesson.* Temp + rename, as [part 3](03_atomic_save.ipynb) built it, survives
# a killed process. This part is about what it does not survive, and about what real systems
# store. Nothing here is needed for the exercises; all of it matters in production.
#
# ## A killed process is not a power cut
#
# When a process is killed, the data it wrote is already in the operating system's page cache,
# and the OS writes it to disk later, crash or no crash. That is why every crash in the harness
# (SIGKILL, a torn write) behaves as the last part showed. A power cut takes the page cache with
# it: whatever had not reached the disk is gone, and the file system may have recorded the
# rename before the temp file's bytes. After a reboot, `checkpoint.json` can then be empty or
# partial: the zero-length files many ext4 users found after crashes in 2009 were exactly this
# pattern, and Pillai et al., "All File Systems Are Not Created Equal" (OSDI 2014), found such
# ordering assumptions broken in widely used software.
#
# Two `fsync` calls close the gap:
#
# 1. `f.flush()` then `os.fsync(f.fileno())` on the temp file *before* the rename: its bytes are
#    on the disk before any name points at them;
# 2. an `fsync` of the directory *after* the rename: the rename itself is on the disk before the
#    save returns (Linux `fsync(2)`: syncing a file does not sync the directory entry that names
#    it).
#
# On macOS, `fsync` is not enough on its own: it hands the data to the drive, which may still hold
# it in its own cache when the power goes. Apple's `fsync(2)` man page says so and points to
# `fcntl(fd, F_FULLFSYNC)`, which asks the drive to write its cache out. Python's `os.fsync` does
# not do that; `fcntl.fcntl(fd, fcntl.F_FULLFSYNC)` does (macOS only).
#
# A test cannot pull the plug, but it can record every file operation a save makes and then
# ask what a disk *may* hold after a power cut at any moment, by the rules disks follow (the
# model of Pillai et al.): a file's data written since its last fsync may be on disk fully,
# partly, as zeros or not at all; changes to a folder reach the disk in the order they were
# made, some prefix of them, unless the folder was synced. Below, four saves that differ only in
# which of the two fsyncs they make run for real in the course's grader (Linux), and the table
# shows every state a power cut while the loop's second tool runs could leave, and whether
# resume copes. It is the engine that grades Level 3.

# %%
from graders.teaching.power_cut import power_cut_table

power_cut_table()

# %% [markdown]
# Only the save that makes both fsyncs keeps what the loop relied on. Without the folder's fsync
# the save is still atomic (old or new, never torn), but a power cut can undo the rename and
# bring back a save from before a tool that already ran; without the file's fsync the rename can
# reach the disk before the bytes, and `checkpoint.json` is empty: the very failure temp + rename
# was meant to prevent. Many saves in the wild make the first fsync and not the second.
#
# **Where this model stops.** On macOS `os.fsync` leaves the data in the drive's cache:
# `fcntl.fcntl(fd, fcntl.F_FULLFSYNC)` is what empties it. Windows cannot open a folder to sync
# it, and does not document `os.replace` as atomic. Network file systems make weaker promises
# of their own. The model is also only as good as the recording: a write through a memory map
# is not a file operation it sees.
#
# **Level 3** (`exercises/lesson2/03_power_cut.ipynb`) gives you the atomic save from Level 2
# and asks for one that survives a power cut; it is graded by this engine, at every moment.
#
# Each fsync costs real time on a real disk (milliseconds, or much more on a network file
# system); [part 5](05_claude_code_and_what_checkpoints_cost.ipynb) measures what a save costs on
# your machine.
#
# ## Unique temp names
#
# The source lesson's save writes `checkpoint.json.tmp`, one fixed name. If two writers ever
# save at once (two threads, a restarted process while the old one is still alive), they share
# that file. Here are two real saves, interleaved step by step as two processes might, first with
# the fixed name, then with `tempfile.mkstemp`.

# %%
from graders.teaching.predict import compare, predict

predict("two_writers_fixed_name")

# %%
import tempfile

from graders.teaching.deeper import two_writers

with tempfile.TemporaryDirectory() as folder:
    print(two_writers(folder, unique_names=False).to_text())
    print()
    print(two_writers(folder, unique_names=True).to_text())
compare("two_writers_fixed_name")

# %% [markdown]
# With one name, B's `open(..., "w")` emptied the file A was halfway through, A went on writing
# at its old offset, and A's rename put the mixture in place. Here that file even parses, but
# only because this demonstration stacked the odds: both states are padded with a long run of
# `x` inside one string, so the cut falls in the middle of that string in both, and the two
# halves join into valid JSON. Real saves would usually splice into torn JSON; now and then they
# would not, and a file that parses but is neither save is worse, because nothing notices. With
# unique names each save is whole.
# Note what unique names do *not* fix: the later rename wins, even when it carries the older
# state. One loop should own a checkpoint; if two processes might, take a lock.
#
# ## What real systems store
#
# Production systems that survive crashes keep the same six things, under other names, plus
# identity for what is running. The `pendingToolUse` column is the one this lesson is about:
# each system has a way to say "this step was started and its result is not recorded".
#
# | system | what plays `pendingToolUse` | what it stores beyond the six fields |
# |---|---|---|
# | LangGraph checkpointers | the tasks scheduled to run next (`StateSnapshot.next`) | a whole checkpoint per step; a thread id, the parent checkpoint's id, a format version `v` (our `version`) |
# | Temporal | an ActivityTaskScheduled event with no completion event | the full event history; an activity id and attempt number |
# | DBOS, Restate, Inngest | the first step with no recorded output | a workflow id; stable step ids |
# | OpenAI Agents SDK `RunState` | the interruptions of the current step | `$schemaVersion` (our `version`); usage per response (our `tokensUsed`, finer) |
# | Claude Code checkpoints | none: one checkpoint per user prompt, for `/rewind` | snapshots of your files: an undo feature, not crash recovery ([part 5](05_claude_code_and_what_checkpoints_cost.ipynb)) |
#
# Two differences from this lesson's `checkpoint.json` stand out. They give every run and every
# step a stable id, so a resumed run can tell "step 7 already ran" from "a new step 7". And some
# *append* (Temporal's event history, the durable-execution engines' step logs) instead of
# rewriting the whole state at every save, for the reason part 5 measures. LangGraph saves a
# whole checkpoint per step; its `pending_writes` are something else again: the writes of tasks
# that *succeeded* in a step where a sibling task failed, kept so that a retry does not run them
# a second time.
#
# Also beyond the source: the Messages API allows several `tool_use` blocks in one assistant
# message, and every one needs its `tool_result` in the next user message (the API answers 400
# otherwise). A loop that allows parallel calls makes `pendingToolUse` a list and reconciles each
# entry.
#
# ## Check yourself

# %%
from graders.teaching.widgets import show_quiz

show_quiz("power_loss")

# %% [markdown]
# ## Several tool calls in one turn
#
# One response of the Messages API may hold several `tool_use` blocks: the model asks for the
# logs, the metrics and the deploys of a service at once. Each block needs its `tool_result`,
# and all of them go in the one user message that follows, in the order of the blocks; a result
# missing, or the results spread over two messages, and the API refuses the next request with a
# 400 error.
#
# The source says `pendingToolUse` then "becomes a list, the reasoning is the same". The list is
# right; the reasoning is not quite the same. With one call per turn, a crash leaves at most one
# call in doubt and nothing finished to lose. With three, the crash can come while the third runs,
# after the first two returned. If their results are only in memory until save point B, the
# crash loses them, and resume runs tools that already ran. So the checkpoint changes shape:
#
# - `pendingToolUse` is `None`, or a list with one `{"id", "name", "input"}` per block, in block
#   order, saved before the first tool of the turn runs (save point A, for the whole turn);
# - when a call finishes, its entry gains `"result"` and the checkpoint is saved before the next
#   tool starts;
# - save point B appends one user message with every result, in block order, and sets
#   `pendingToolUse` back to `None`.
#
# Resume then reuses each entry that has a result, reconciles the one that was running, and
# runs those that never started. Move the slider through one turn of the `incident-triage`
# scenario, run by Level 4's reference loop: at each moment, what `checkpoint.json` holds and
# what resume would do if the process were killed there.

# %%
from graders.teaching.parallel_turn import show_turn

show_turn("incident-triage", turn=1)

# %% [markdown]
# **Level 4** (`exercises/lesson2/04_parallel_tool_calls.ipynb`) gives you Level 2's fixed loop,
# which handles one block per turn, and asks you to make it handle several, with the checkpoint
# in this shape at every moment. The grader kills it while each tool runs, while each model call
# is in flight and in every save, and compares `checkpoint.json` with the ledger of what the
# tools really did.

# %% [markdown]
# Next: [part 5, Claude Code's checkpoints and what checkpoints cost](05_claude_code_and_what_checkpoints_cost.ipynb).
