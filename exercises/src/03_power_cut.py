# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] nbgrader={"grade": false, "grade_id": "l3_intro", "locked": true, "schema_version": 3, "solution": false}
# # Level 3: survive a power cut
#
# Kill a process at any moment and the operating system keeps what the process had already
# handed to it, and writes it to the disk later. Pull the plug and the operating system goes
# too, with everything that had not reached the disk yet; what reached it first is then up to
# the file system, not to the order of your writes and renames, unless your save makes the
# system wait for the disk between them (part 4 of the lesson).
#
# **What is wanted:** a `save_checkpoint` after which, whenever the power fails,
# `checkpoint.json` is a complete save and no save the loop relied on is missing (the loop runs
# the next tool as soon as a save returns).
#
# **By the end you can:**
#
# 1. predict what each of four saves written by colleagues can lose in a power cut, then check
#    your prediction against the grader;
# 2. fix the first of them, your starter, so that both checks below pass (checked
#    automatically);
# 3. explain what the others lose, and where the protection stops (read by your instructor).
#
# **How it is checked:** your save runs with the loop below once, in a sandbox, and every
# file operation it makes is recorded. From that record the grader builds every state a power
# cut could leave at every moment of the run, with the lesson's conservative model of what
# ext4, xfs and btrfs may keep, and reads `checkpoint.json` in each as resume would. Two
# checks, each with its own points: `checkpoint.json` is never empty or cut short, and no save
# the loop relied on is ever missing.
#
# **Stuck?** Run `hint()` in a new cell: a hint for the first check that does not pass yet (the
# same one each time the cell runs); `hint(next=True)` opens the next. How many you opened is
# noted in the notebook; it does not change your grade.
#
# (The checks run wherever the notebook does: in the grader's sandbox where Linux has one, else
# with strace or the course's own recorder of your code's file operations, as the table then
# says in one line; grading runs them again in the sandbox.)

# %% [markdown] nbgrader={"grade": false, "grade_id": "l3_saves_intro", "locked": true, "schema_version": 3, "solution": false}
# ## Four saves
#
# Four colleagues each wrote a save that syncs something. All four write a temp file in the
# checkpoint's folder and rename it over `checkpoint.json`, so a killed process never tears the
# checkpoint. Save 1 is the one in your answer cell further down; save 2 is Level 2's fixed save.
# The cell below lists what each of them does, step by step; once your eight predictions are in
# and the notebook is saved, it shows their code when you run it again.

# %% nbgrader={"grade": false, "grade_id": "l3_saves", "locked": true, "schema_version": 3, "solution": false}
from graders.notebook import compare_saves, show_saves

show_saves(globals())

# %% [markdown] nbgrader={"grade": false, "grade_id": "l3_predict_intro", "locked": true, "schema_version": 3, "solution": false}
# ## Predict, then look
#
# For each save, decide before you run anything below: can a power cut at some moment of a run
# leave
#
# - `"empty"`: `checkpoint.json` empty or cut short?
# - `"older"`: an older save in `checkpoint.json` (or none at all), although the loop had gone on
#   to the next tool?
#
# Fill in all eight cells with `True` or `False`, then run the cell under it: it shows your table
# beside what the grader finds, and shows nothing until every cell is filled.

# %% nbgrader={"grade": false, "grade_id": "l3_predict_table", "locked": false, "schema_version": 3, "solution": false}
PREDICTED = {
    "save 1": {"empty": None, "older": None},
    "save 2": {"empty": None, "older": None},
    "save 3": {"empty": None, "older": None},
    "save 4": {"empty": None, "older": None},
}

# %% nbgrader={"grade": false, "grade_id": "l3_predict_compare", "locked": true, "schema_version": 3, "solution": false}
compare_saves(PREDICTED)

# %% [markdown] nbgrader={"grade": false, "grade_id": "l3_code_intro", "locked": true, "schema_version": 3, "solution": false}
# ## Your save: fix save 1
#
# Edit this cell so that both checks below pass; keep `save_checkpoint` at its top level, under
# the same name.

# %% nbgrader={"grade": false, "grade_id": "l3_save_checkpoint", "locked": false, "schema_version": 3, "solution": true} checkpoint_lab={"solution_from": "solutions/03_power_cut.py:CHECKPOINT,save_checkpoint", "starter_from": "tests/fixtures/03_power_cut/starter.py:CHECKPOINT,save_checkpoint"}

# %% [markdown] nbgrader={"grade": false, "grade_id": "l3_loop_intro", "locked": true, "schema_version": 3, "solution": false}
# ## The loop (given, locked)
#
# Level 2's fixed loop: save point A before each tool, save point B after it. It calls your
# `save_checkpoint`; the grader runs your save with exactly this loop. Its code is Level 2's
# answer, so it is not shown here: the course runs it (`checkpoint-lab solutions 2` shows it
# once your Level 2 checks pass).

# %% nbgrader={"grade": false, "grade_id": "l3_run_agent", "locked": true, "schema_version": 3, "solution": false}
from graders.notebook import given_loop

run_agent = given_loop(globals())  # calls the save_checkpoint this notebook defines

# %% nbgrader={"grade": false, "grade_id": "l3_hints", "locked": true, "schema_version": 3, "solution": false}
from graders.notebook import Hints

hint = Hints("03_power_cut", globals())

# %% [markdown] nbgrader={"grade": false, "grade_id": "l3_checks_intro", "locked": true, "schema_version": 3, "solution": false}
# ## The checks
#
# Run them after each change to your save. A failing check names the moment of the power cut,
# what `checkpoint.json` could hold then, and what resume would run into.

# %% nbgrader={"grade": true, "grade_id": "l3_file_synced", "locked": true, "points": 3, "schema_version": 3, "solution": false}
# Check: after a power cut at any moment of the run, checkpoint.json is never empty or cut
# short, on support-tickets.
from graders.notebook import run_check

run_check("l3_never_empty", globals())

# %% nbgrader={"grade": true, "grade_id": "l3_directory_synced", "locked": true, "points": 3, "schema_version": 3, "solution": false}
# Check: after a power cut at any moment of the run, no save the loop relied on is missing (no
# older save, or none, once the next tool has run), on support-tickets.
from graders.notebook import run_check

run_check("l3_no_save_lost", globals())

# %% nbgrader={"grade": true, "grade_id": "l3_file_synced_hidden", "locked": true, "points": 2, "schema_version": 3, "solution": false}
# Hidden check: the first check on a longer scenario, when your work is graded.
from graders.notebook import run_check

run_check("l3_never_empty_hidden", globals())

# %% nbgrader={"grade": true, "grade_id": "l3_directory_synced_hidden", "locked": true, "points": 2, "schema_version": 3, "solution": false}
# Hidden check: the second check on a longer scenario, when your work is graded.
from graders.notebook import run_check

run_check("l3_no_save_lost_hidden", globals())

# %% [markdown] nbgrader={"grade": false, "grade_id": "l3_written_intro", "locked": true, "schema_version": 3, "solution": false}
# ## In your own words
#
# Explain your table. Saves 3 and 4 each sync both the file and the folder, yet each can lose
# something: for each, say what a power cut at the wrong moment leaves on disk, why, and what
# resume then runs into. Then say where the protection of your fixed save stops (another
# operating system, another kind of disk). Write your answer in the cell below (double-click it
# to edit).

# %% [markdown] nbgrader={"grade": true, "grade_id": "l3_why_two_fsyncs", "locked": false, "points": 3, "schema_version": 3, "solution": true}
# ### BEGIN SOLUTION
# **Mark scheme** (one point each; the model answer is `solutions/03_power_cut.written_answers.md`).
#
# - [ ] Save 3: `os.fsync` runs before `flush()`, while the bytes are still in Python's own
#   buffer, so it syncs only what had already left it (for this small save, nothing); the rest
#   reaches the operating system at `close`, unsynced, and the rename can reach the disk before
#   it: `checkpoint.json` empty or cut short, resume fails on `json.load`, and the previous save
#   is gone. (Its folder sync, before the rename, also loses as save 4's does.)
# - [ ] Save 4: the folder is synced *before* the rename, which covers nothing the rename did;
#   the rename is a change to the folder, so a power cut can undo it and bring an older save back
#   (or none) although the next tool already ran: resume runs that tool again.
# - [ ] Where it stops: macOS needs `F_FULLFSYNC` (`os.fsync` leaves the drive's cache); on
#   Windows Python cannot open a folder to sync it, `os.replace` asks for no write-through and no
#   durable same-volume rename is documented; network file systems promise less; the model is a
#   conservative one of ext4/xfs/btrfs (after Pillai et al.), not of every file system.
#
# Whether the two syncs are present and in the right place is graded automatically by
# `l3_file_synced`, `l3_directory_synced` and their hidden checks: do not mark it here.
# ### END SOLUTION

# %% [markdown] nbgrader={"grade": false, "grade_id": "l3_self_check_intro", "locked": true, "schema_version": 3, "solution": false}
# ## Self-check
#
# This notebook's visible checks at once, in a table. The same table is printed in a terminal by
# `checkpoint-lab check 03_power_cut` (save the notebook first). It checks your own copy: in your
# workspace when you run it from the course's folder (where `course.py` is), or in `lesson2/` on a
# hub, where the Assignments tab fetched it (there, from your home folder). The course's website has
# no terminal: the cell below is its self-check.

# %% nbgrader={"grade": false, "grade_id": "l3_self_check", "locked": true, "schema_version": 3, "solution": false}
from graders.notebook import self_check

self_check(globals(), "03_power_cut")
