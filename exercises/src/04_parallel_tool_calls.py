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

# %% [markdown] nbgrader={"grade": false, "grade_id": "l4_intro", "locked": true, "schema_version": 3, "solution": false}
# # Level 4: several tool calls in one turn
#
# The Messages API lets one response hold several `tool_use` blocks: the model asks for two or
# three tools at once. Every block needs its `tool_result`, and all of them go in the next user
# message, in one message; otherwise the API refuses the next request (a 400 error). The API
# pairs each result with its call by `tool_use_id`, so the results may come in any order. The
# loop below is the lesson's loop, which handles one block per turn. Run on a turn with three
# blocks, it runs the first tool only, and the model refuses its next call.
#
# **What is wanted:** a `run_agent` that handles every block of a turn, and whose checkpoint
# still tells resume the truth at every moment:
#
# - `pendingToolUse` is `None` when nothing is pending, else a **list** with one entry per
#   `tool_use` block of the turn, in block order: `{"id", "name", "input"}`, saved before the
#   first tool of the turn runs (save point A);
# - when a call finishes, its entry gains `"result"` (the string the tool returned), and the
#   checkpoint is saved before the next tool starts: killed while tool 3 runs, `checkpoint.json`
#   holds tools 1 and 2 with their results;
# - save point B appends **one** user message with a `tool_result` for every block (in any
#   order: the checks accept any; block order is a good habit) and sets `pendingToolUse` back to
#   `None`; `turns` counts the turn.
#
# Your loop may run the turn's tools one after another, or at the same time (threads); either
# way each finished call's result is on disk before the turn goes on, and a result once saved
# stays saved (part 5 of the lesson).
#
# For a turn that asks for three tools, `checkpoint.json` while the third one runs:
#
# ```json
# "pendingToolUse": [
#   {"id": "toolu_01A…", "name": "fetch_logs",    "input": {…}, "result": "02:14 ERROR …"},
#   {"id": "toolu_01B…", "name": "fetch_metrics", "input": {…}, "result": "hour,error_rate…"},
#   {"id": "toolu_01C…", "name": "list_deploys",  "input": {…}}
# ]
# ```
#
# **How it is checked:** your loop runs with the given save (below, locked) once per scenario,
# in a sandbox, on `incident-triage` (turns of three, one and two calls); every file operation
# is recorded, and the grader reads `checkpoint.json` as resume would at every moment a kill
# could hit: while each tool runs, while each model call is in flight, in every save. It
# compares what it reads with the ledger of what the tools really did. Three checks, each with
# its own points: every call in flight is on record, every finished call is kept with its
# result, one result message per turn. Hidden checks run the same on a longer scenario.
#
# **Stuck?** Run `hint()` in a new cell: a hint for the first check that does not pass yet (the
# same one each time the cell runs); `hint(next=True)` opens the next. How many you opened is
# noted in the notebook; it does not change your grade.
#
# (The checks need Linux with strace and bubblewrap, where the course's grader runs; elsewhere
# they say so and your instructor's grading runs them.)

# %% [markdown] nbgrader={"grade": false, "grade_id": "l4_save_intro", "locked": true, "schema_version": 3, "solution": false}
# ## The save (given, locked)
#
# Level 2's atomic save: a temp file in the checkpoint's folder, then one rename over
# `checkpoint.json`. Your loop calls it. Its code is Level 2's answer, so the course runs it
# rather than show it here.

# %% nbgrader={"grade": false, "grade_id": "l4_save_checkpoint", "locked": true, "schema_version": 3, "solution": false}
from graders.notebook import given_save

save_checkpoint = given_save()

# %% [markdown] nbgrader={"grade": false, "grade_id": "l4_code_intro", "locked": true, "schema_version": 3, "solution": false}
# ## Your loop
#
# Edit this cell; keep `run_agent` at its top level, under the same name and arguments.

# %% nbgrader={"grade": false, "grade_id": "l4_run_agent", "locked": false, "schema_version": 3, "solution": true} checkpoint_lab={"solution_from": "solutions/04_parallel_tool_calls.py:run_agent", "starter_from": "tests/fixtures/04_parallel_tool_calls/starter.py:run_agent"}

# %% nbgrader={"grade": false, "grade_id": "l4_hints", "locked": true, "schema_version": 3, "solution": false}
from graders.notebook import Hints

hint = Hints("04_parallel_tool_calls", globals())

# %% [markdown] nbgrader={"grade": false, "grade_id": "l4_checks_intro", "locked": true, "schema_version": 3, "solution": false}
# ## The checks
#
# Run them after each change to your loop. A failing check names the moment of the crash, what
# `checkpoint.json` held then, and what resume would run into.

# %% nbgrader={"grade": true, "grade_id": "l4_no_call_lost", "locked": true, "points": 3, "schema_version": 3, "solution": false}
# Check: killed at any moment, every tool that had started is listed in pendingToolUse or
# recorded in messages, on incident-triage.
from graders.notebook import run_check

run_check("l4_no_call_lost", globals())

# %% nbgrader={"grade": true, "grade_id": "l4_results_kept", "locked": true, "points": 3, "schema_version": 3, "solution": false}
# Check: killed at any moment, every call that had returned is kept with its result, on
# incident-triage.
from graders.notebook import run_check

run_check("l4_results_kept", globals())

# %% nbgrader={"grade": true, "grade_id": "l4_one_result_message", "locked": true, "points": 3, "schema_version": 3, "solution": false}
# Check: messages hold one result message per turn, answering every call of the turn (in any
# order), valid for the API, before the model is called again and at the end, on
# incident-triage.
from graders.notebook import run_check

run_check("l4_one_result_message", globals())

# %% nbgrader={"grade": true, "grade_id": "l4_no_call_lost_hidden", "locked": true, "points": 2, "schema_version": 3, "solution": false}
# Hidden check: the first check on a longer scenario, when your work is graded.
from graders.notebook import run_check

run_check("l4_no_call_lost_hidden", globals())

# %% nbgrader={"grade": true, "grade_id": "l4_results_kept_hidden", "locked": true, "points": 2, "schema_version": 3, "solution": false}
# Hidden check: the second check on a longer scenario, when your work is graded.
from graders.notebook import run_check

run_check("l4_results_kept_hidden", globals())

# %% nbgrader={"grade": true, "grade_id": "l4_one_result_message_hidden", "locked": true, "points": 2, "schema_version": 3, "solution": false}
# Hidden check: the third check on a longer scenario, when your work is graded.
from graders.notebook import run_check

run_check("l4_one_result_message_hidden", globals())

# %% [markdown] nbgrader={"grade": false, "grade_id": "l4_written_intro", "locked": true, "schema_version": 3, "solution": false}
# ## In your own words
#
# The source lesson says that with several calls per turn `pendingToolUse` "becomes a list, the
# reasoning is the same". Your loop is killed while tool 3 of a three-call turn runs. What does
# `checkpoint.json` hold, and what should resume do with each of the three calls? Why is "the
# reasoning is the same" not quite true? And why must save point B write one user message with
# every result rather than one message per result? Write your answer in the cell below
# (double-click it to edit).

# %% [markdown] nbgrader={"grade": true, "grade_id": "l4_why_keep_results", "locked": false, "points": 3, "schema_version": 3, "solution": true}
# ### BEGIN SOLUTION
# **Mark scheme** (one point each; the model answer is `solutions/04_parallel_tool_calls.written_answers.md`).
#
# - [ ] What is on disk and what resume does: the three calls listed in `pendingToolUse`, tools
#   1 and 2 with their results: resume reuses those two results without running the tools
#   again, and reconciles tool 3 (in flight: it may or may not have had its effect) before
#   running it again, if at all.
# - [ ] Why it is not the same reasoning: with one call, a crash leaves at most one call in
#   doubt and nothing finished to lose; with several, some finished before the crash, and their
#   results must be saved as they come (before the next tool starts), or resume runs finished
#   tools again (a second email, a second charge).
# - [ ] One message: the API requires a `tool_result` for every `tool_use` of a turn, all in the
#   very next user message (paired by `tool_use_id`, in any order); split across messages (or
#   with one missing) it refuses the request with a 400, so resume would send a conversation the
#   model refuses.
#
# Whether the loop keeps the list, the results and the one message at every crash point is
# graded automatically by the `l4_*` checks: do not mark it here.
# ### END SOLUTION

# %% [markdown] nbgrader={"grade": false, "grade_id": "l4_self_check_intro", "locked": true, "schema_version": 3, "solution": false}
# ## Self-check
#
# This notebook's visible checks at once, in a table. The same table is printed in a terminal by
# `checkpoint-lab check 04_parallel_tool_calls` (save the notebook first). It checks your own copy:
# in your workspace when you run it from the course's folder (where `course.py` is), or in
# `lesson2/` on a hub, where the Assignments tab fetched it (there, from your home folder). The
# course's website has no terminal: the cell below is its self-check.

# %% nbgrader={"grade": false, "grade_id": "l4_self_check", "locked": true, "schema_version": 3, "solution": false}
from graders.notebook import self_check

self_check(globals(), "04_parallel_tool_calls")
