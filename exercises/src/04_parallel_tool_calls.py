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
# **What is wanted:** a `run_agent` that handles every block of a turn, designed so that these
# stay true at every moment a kill could hit:
#
# 1. every call the model asked for in this turn is on disk before any of its tools runs;
# 2. every call that has finished is on disk with its result before another tool starts, and a
#    result once saved stays saved;
# 3. the conversation the loop sends, and the one it saves, is one the API accepts: every
#    `tool_use` answered by a `tool_result` with its id, all in the very next user message, and
#    in that message the `tool_result` blocks come before any text;
# 4. when no call is in flight, nothing is recorded as pending, and `turns` counts the turn.
#
# Where the saves go, and in which order the tools run (one after another, or at once), is
# yours to design. What resume reads is fixed: `pendingToolUse` is `None`, or a **list** with one
# entry per `tool_use` block of the turn, in block order, each `{"id", "name", "input"}` plus
# `"result"` (the string the tool returned) once that call has finished.
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
# (The checks run wherever the notebook does: in the grader's sandbox where Linux has one, else
# with strace or the course's own recorder of your code's file operations, as the table then
# says in one line; grading runs them again in the sandbox.)

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
# A colleague moves your loop to `asyncio`: the turn's three tools start together under
# `asyncio.gather`, and each result is saved as it lands. The disk is slow, so a save takes
# longer than a tool, and the result of the last tool to finish lands last, while an earlier
# result is still being saved. Which of the four properties above can break, and how (think of
# two saves of one state at once, and of a kill just after the last result lands)? What must be
# done one at a time, and what may still run at once? Killed while a save of tool 2's result is
# being written and tool 3 is still running, what does `checkpoint.json` hold, and what should
# resume do with each call? Write your answer in the cell below (double-click it to edit).

# %% [markdown] nbgrader={"grade": true, "grade_id": "l4_why_keep_results", "locked": false, "points": 3, "schema_version": 3, "solution": true}
# ### BEGIN SOLUTION
# **Mark scheme** (one point each; the model answer is `solutions/04_parallel_tool_calls.written_answers.md`).
#
# - [ ] What breaks: two saves of one state at once can interleave or land out of order (the
#   older state renamed last, or two saves sharing one temp name), so a saved result can vanish
#   (property 2); and a result that lands after the others is in memory only until its own save
#   is on disk: killed then, the finished tool runs again.
# - [ ] What is serialised: changes to the state and each save are done one at a time (a lock,
#   or one writer task the tools hand their results to), each save a copy of the whole
#   state; the tools themselves may still run at once. The next tool may not *start* before the
#   save of the calls is on disk (property 1).
# - [ ] What resume finds: the three calls listed, tool 1's result (and tool 2's only if that
#   save completed, the atomic save gives the previous state otherwise); it reuses every saved
#   result, and reconciles each call without one (tool 2 finished, tool 3 in flight: either may
#   have had its effect) before running it again, then sends one user message with the three
#   results, `tool_result` blocks first.
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
