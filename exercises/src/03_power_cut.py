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
# The save below is the atomic save from Level 2: a temp file in the checkpoint's folder, then
# `os.replace`. Kill the process at any moment and `checkpoint.json` is one complete save, because
# the kernel keeps what the process wrote and puts it on the disk later.
#
# Pull the plug instead and the kernel goes too, with everything it had not written out yet.
# What reaches the disk, and in which order, is then up to the kernel and the drive, not to the
# order of your calls.
#
# **What is wanted:** a `save_checkpoint` whose save is on the disk for good before it returns,
# because as soon as it returns the loop runs the next tool: after a power cut at any moment,
# `checkpoint.json` must be a complete save, and no save the loop relied on may be missing.
#
# **How it is checked:** your save runs with the lesson's loop (below, locked) once, in a
# sandbox, and every file operation it makes is recorded. From that record the grader builds
# every state a power cut could leave at every moment, by the rules a real disk follows (data
# written since a file's last sync may be lost, zeroed or half kept; a change to a folder since
# that folder's last sync may be undone), and reads `checkpoint.json` in each as resume would.
# Two checks, each with its own points: the bytes reach the disk before the rename, and the
# rename reaches the disk before the next tool runs.
#
# **Stuck?** Run `hint()` in a new cell: a hint for the first check that does not pass yet (the
# same one each time the cell runs); `hint(next=True)` opens the next. How many you opened is
# noted in the notebook; it does not change your grade.
#
# (The checks need Linux with strace and bubblewrap, where the course's grader runs; elsewhere
# they say so and your instructor's grading runs them.)

# %% [markdown] nbgrader={"grade": false, "grade_id": "l3_code_intro", "locked": true, "schema_version": 3, "solution": false}
# ## Your save
#
# Edit this cell; keep `save_checkpoint` at its top level, under the same name.

# %% nbgrader={"grade": false, "grade_id": "l3_save_checkpoint", "locked": false, "schema_version": 3, "solution": true} checkpoint_lab={"solution_from": "solutions/03_power_cut.py:CHECKPOINT,save_checkpoint", "starter_from": "tests/fixtures/03_power_cut/starter.py:CHECKPOINT,save_checkpoint"}

# %% [markdown] nbgrader={"grade": false, "grade_id": "l3_loop_intro", "locked": true, "schema_version": 3, "solution": false}
# ## The loop (given, locked)
#
# Level 2's fixed loop: save point A before each tool, save point B after it. It calls your
# `save_checkpoint`; the grader runs your save with exactly this loop.

# %% nbgrader={"grade": false, "grade_id": "l3_run_agent", "locked": true, "schema_version": 3, "solution": false} checkpoint_lab={"code_from": "solutions/02_two_latent_failures.py:run_agent"}

# %% nbgrader={"grade": false, "grade_id": "l3_hints", "locked": true, "schema_version": 3, "solution": false}
from graders.hints import Hints

hint = Hints("03_power_cut", globals())

# %% [markdown] nbgrader={"grade": false, "grade_id": "l3_checks_intro", "locked": true, "schema_version": 3, "solution": false}
# ## The checks
#
# Run them after each change to your save. A failing check names the moment of the power cut,
# what `checkpoint.json` could hold then, and what resume would run into.

# %% nbgrader={"grade": true, "grade_id": "l3_file_synced", "locked": true, "points": 3, "schema_version": 3, "solution": false}
# Check: after a power cut at any moment of the run, checkpoint.json holds a complete save (the
# bytes of each save reach the disk before its rename does), on support-tickets.
from graders.checks import run_check

run_check("l3_file_synced", globals())

# %% nbgrader={"grade": true, "grade_id": "l3_directory_synced", "locked": true, "points": 3, "schema_version": 3, "solution": false}
# Check: after a power cut at any moment, no save the loop relied on is missing (each rename
# reaches the disk before the next tool runs), on support-tickets.
from graders.checks import run_check

run_check("l3_directory_synced", globals())

# %% nbgrader={"grade": true, "grade_id": "l3_file_synced_hidden", "locked": true, "points": 2, "schema_version": 3, "solution": false}
# Hidden check: the first check on a longer scenario, when your work is graded.
from graders.checks import run_check

run_check("l3_file_synced_hidden", globals())

# %% nbgrader={"grade": true, "grade_id": "l3_directory_synced_hidden", "locked": true, "points": 2, "schema_version": 3, "solution": false}
# Hidden check: the second check on a longer scenario, when your work is graded.
from graders.checks import run_check

run_check("l3_directory_synced_hidden", globals())

# %% [markdown] nbgrader={"grade": false, "grade_id": "l3_written_intro", "locked": true, "schema_version": 3, "solution": false}
# ## In your own words
#
# Why does a save need one sync of the file *before* the rename and one of the folder *after*
# it? For each, say what a power cut at the wrong moment leaves on disk without it, and what
# resume then runs into. Where does this protection stop (another operating system, another
# kind of disk)? Write your answer in the cell below (double-click it to edit).

# %% [markdown] nbgrader={"grade": true, "grade_id": "l3_why_two_fsyncs", "locked": false, "points": 3, "schema_version": 3, "solution": true}
# ### BEGIN SOLUTION
# **Mark scheme** (one point each; the model answer is `solutions/03_power_cut.written_answers.md`).
#
# - [ ] The file's sync before the rename: otherwise the rename can reach the disk before the
#   bytes, and `checkpoint.json` is empty or half written after the power cut (resume fails on
#   `json.load`, and the previous save is gone).
# - [ ] The folder's sync after the rename: the rename is a change to the folder; unsynced, a
#   power cut can undo it and bring the previous save back although the next tool already ran
#   (resume runs it again). A sync before the rename covers nothing the rename did.
# - [ ] Where it stops: macOS needs `F_FULLFSYNC` (`os.fsync` leaves the drive's cache), Windows
#   cannot sync a folder, network filesystems promise less.
#
# Whether the two syncs are present and in the right place is graded automatically by
# `l3_file_synced`, `l3_directory_synced` and their hidden checks: do not mark it here.
# ### END SOLUTION

# %% [markdown] nbgrader={"grade": false, "grade_id": "l3_self_check_intro", "locked": true, "schema_version": 3, "solution": false}
# ## Self-check
#
# This notebook's visible checks at once, in a table. From a terminal, in the course's folder:
# `checkpoint-lab check workspace/exercises/lesson2/03_power_cut.ipynb` (save the notebook first).

# %% nbgrader={"grade": false, "grade_id": "l3_self_check", "locked": true, "schema_version": 3, "solution": false}
from graders.selfcheck import self_check

self_check(globals(), "03_power_cut")
