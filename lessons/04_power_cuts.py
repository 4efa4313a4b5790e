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
# # Checkpoints · Part 4 of 7: power cuts
#
# **Time:** about 20 minutes.
# **Questions:** What does temp + rename survive, and what not? What must reach the disk, and in
# which order, before the loop may run its next tool?
# **Objectives:** tell a killed process from a power cut; say which fsyncs a durable save makes,
# where, and why; say where that protection stops.
#
# *Beyond the source lesson.* Temp + rename ([part 3](03_atomic_save.ipynb)) survives a killed
# process; [Level 3](../exercises/03_power_cut.ipynb) asks for a save that survives
# losing power too.
#
# ## A killed process is not a power cut
#
# A process hands its bytes to the operating system with `write(2)`; the system keeps them in its
# page cache and writes them to the disk later, kill or no kill. On either side of that:
#
# - Bytes still in Python's own buffer (before `flush()` or `close`) were never handed over: a
#   kill loses them too. So a save flushes before it asks about the file's bytes (`os.fsync`).
# - A power cut takes the page cache with it, and the file system may have written the rename
#   before the temp file's bytes: `checkpoint.json` is then empty after the reboot, as many ext4
#   users found in 2009. Since then ext4's default `auto_da_alloc` writes a file's data out when
#   it is renamed over another; its author calls that a heuristic, not a promise, and it covers
#   neither the first save (nothing to rename over) nor other file systems.
#
# `os.fsync(fd)` waits until one file's bytes (or one folder's entries) are on the disk.
#
# ## Four saves, one power cut
#
# A test cannot pull the plug, but it can record a save's file operations and list every crash
# state a power cut *may* leave. POSIX itself says nothing about what survives a crash. The
# course's model is a conservative summary of what ext4, xfs and btrfs were measured to keep
# (after Pillai et al., "All File Systems Are Not Created Equal", OSDI 2014): a file's data
# written since its last fsync may be kept whole, in part, as zeros or not at all (never another
# file's old blocks, which ext4 `data=writeback` can show); a folder's changes since its last
# fsync may be undone, the latest first (not every file system keeps that order); and an fsync
# that returned is trusted. A save that survives the model survives any file system that honours
# fsync and keeps no stranger states.
#
# Four saves differ only in their fsyncs: none, the temp file's before the rename, the folder's
# after it, or both. They run below in the grader (Linux); the table shows every state a power
# cut while tool 2 runs could leave. The same engine grades Level 3.

# %%
from graders.notebook import compare, predict

predict("power_cut_empty")

# %%
from graders.notebook import power_cut_table

display(power_cut_table())
compare("power_cut_empty")

# %% [markdown]
# Only both fsyncs keep what the loop relied on. Without the folder's, a power cut can undo the
# rename and bring back a save from before a tool that already ran; without the file's, the
# rename can land before the bytes, and `checkpoint.json` is empty. So a durable save makes:
#
# 1. `f.flush()` then `os.fsync(f.fileno())` on the temp file *before* the rename: its bytes are
#    on the disk before any name points at them;
# 2. an `fsync` of the folder *after* the rename, before the save returns (Linux `fsync(2)`:
#    syncing a file does not sync the directory entry that names it).
#
# Many saves in the wild make the first fsync and not the second.
#
# ## Step through one save
#
# The table showed one moment, tool 2 running. Now cut the power inside the save just before it,
# step by step: before the write, before each fsync, before the rename, and once the save has
# returned. Pick a save, predict what each step could leave, then move the slider. Where does
# "the previous save" stop being possible, where does "the new save" start, and at which step
# does each save lose for good?

# %%
from graders.notebook import show_power_steps

show_power_steps("both")
#
# **Where this stops.** On macOS `os.fsync` leaves the data in the drive's own cache (Apple's
# `fsync(2)` says so); `fcntl.fcntl(fd, fcntl.F_FULLFSYNC)` empties it. On Windows Python cannot
# sync a folder (`os.open` on a directory fails); `os.replace` asks Windows for no write-through,
# and Windows documents no durable guarantee for a rename on one volume.
# Network file systems promise less. A write through a memory map escapes the recording. And
# each fsync costs time: [part 6](06_claude_code_and_what_checkpoints_cost.ipynb) measures it.
#
# ## Check yourself

# %%
from graders.notebook import show_quiz

show_quiz("power_loss")

# %%
show_quiz("folder_sync_after_rename")

# %% [markdown]
# ## Now change it
#
# The save with no fsync: add one, or both, or move one; predict what a power cut while tool 2
# runs can leave, then run.

# %%
my_save = '''
import json, os, tempfile

def save_checkpoint(state):
    fd, tmp = tempfile.mkstemp(dir=".", suffix=".tmp")
    with os.fdopen(fd, "w") as f:
        f.write(json.dumps(state))
    os.replace(tmp, "checkpoint.json")
'''
power_cut_table(saves={"my save": my_save})

# %% [markdown]
# ## Glossary
#
# - **page cache**: the system's in-memory copy of written data, not yet on disk.
# - **power cut**: losing power, and with it what had not reached the disk.
# - **fsync**: wait until a file's (or a folder's) data is on the disk.
# - **durable**: on the disk, beyond a power cut's reach.
# - **crash state**: one state of the disk a crash may leave.

# %% [markdown]
# ## Key points
#
# - A kill leaves what the process handed to the system to be written out; a power cut does
#   not, and the rename may reach the disk before the bytes.
# - A durable save flushes and fsyncs the temp file before the rename, and fsyncs the folder
#   after it, before the loop runs its next tool.
# - It stops where the platform does: `F_FULLFSYNC` on macOS, no folder sync on Windows,
#   network file systems.
#
# Next: [Level 3](../exercises/03_power_cut.ipynb), then
# [part 5, several tool calls in one turn](05_several_tool_calls_in_one_turn.ipynb).
