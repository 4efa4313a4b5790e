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

# %% [markdown] nbgrader={"grade": false, "grade_id": "l2_intro", "locked": true, "schema_version": 3, "solution": false}
# # Level 2: two latent failures
#
# A colleague wrote the agent loop below. It runs a task with two tool calls in a row, and on an
# ordinary day it finishes and leaves a good checkpoint. Kill the process at the wrong moment,
# though, and what it leaves on disk either cannot be read at all or does not match what really
# happened. There are two such weak spots. Finding them is the exercise.
#
# **What is wanted:** a loop whose `checkpoint.json`, wherever the process is killed, is one a
# restarted loop can trust.
#
# **By the end you can:**
#
# 1. crash your colleague's code on purpose and read what it left behind;
# 2. say where the loop gives way under a crash, and what each failure leads to (part 1, read
#    by your instructor);
# 3. fix the code so that the checks below, which kill it at every crash point, pass (part 2,
#    checked automatically).
#
# Work from top to bottom and run every cell (Shift+Enter). Part 1 comes first: until your own
# answer to it is in the saved notebook, the checks say only whether they pass, not what they
# found. When your work is graded, the same checks run again on your answer cells in
# fresh processes, plus hidden checks on a longer task.
#
# **Stuck?** Run `hint()` in a new cell: it shows a hint for the first check that does not pass
# yet, a nudge first, and the same hint each time the cell runs; `hint(next=True)` opens the next
# one (the idea, then code). How many you opened is noted in the notebook for your instructor;
# it does not change your grade.

# %% [markdown] nbgrader={"grade": false, "grade_id": "l2_code_intro", "locked": true, "schema_version": 3, "solution": false}
# ## The code you received
#
# The two cells below hold your colleague's `save_checkpoint` and `run_agent`, as they are. They
# run: try them first. When you fix them, edit these two cells themselves; keep each function at
# the top level of its own cell, under the same name.

# %% nbgrader={"grade": false, "grade_id": "l2_save_checkpoint", "locked": false, "schema_version": 3, "solution": true} checkpoint_lab={"solution_from": "solutions/02_two_latent_failures.py:CHECKPOINT,save_checkpoint", "starter_from": "tests/fixtures/02_two_latent_failures/starter.py:save_checkpoint"}

# %% nbgrader={"grade": false, "grade_id": "l2_run_agent", "locked": false, "schema_version": 3, "solution": true} checkpoint_lab={"solution_from": "solutions/02_two_latent_failures.py:run_agent", "starter_from": "tests/fixtures/02_two_latent_failures/starter.py:run_agent"}

# %% [markdown] nbgrader={"grade": false, "grade_id": "l2_try_it_intro", "locked": true, "schema_version": 3, "solution": false}
# ## Try it
#
# `try_it()` runs your `run_agent` and `save_checkpoint` against the course's fake model on the
# `support-tickets` scenario (list last quarter's tickets, then build the table: two tool
# calls), and shows what ended up in `checkpoint.json` and which saves happened.
#
# `try_it(stop_while_tool_runs=2)` stops the run while the second tool runs, the way a crash
# would. (An exception stands in for the kill here, so that the notebook keeps running; the
# crash cells further down kill the process for real.)

# %% nbgrader={"grade": false, "grade_id": "l2_try_it_helper", "locked": true, "schema_version": 3, "solution": false}
import json
from pathlib import Path

import fake_llm
from graders.notebook import scratch_folder, working_in

# try_it runs your loop in a scratch folder, so checkpoint.json never lands beside this notebook
# (nor in what you hand in): it is SCRATCH / "checkpoint.json". The folder goes with the kernel.
SCRATCH = scratch_folder()


class StopHere(Exception):
    """Stands in for the process dying while a tool runs."""


def try_it(stop_while_tool_runs=None):
    """Run your loop on support-tickets; show each save and what checkpoint.json holds."""
    global save_checkpoint
    (SCRATCH / "checkpoint.json").unlink(missing_ok=True)
    scenario = fake_llm.load_scenario("support-tickets")
    execute_tool = scenario.executor()
    calls = []
    your_save = save_checkpoint

    def tool(name, tool_input):
        calls.append(name)
        result = execute_tool(name, tool_input)
        if len(calls) == stop_while_tool_runs:
            raise StopHere(name)
        return result

    def save_and_report(state):
        pending = state.get("pendingToolUse")
        where = f"pendingToolUse = {pending['name']}" if pending else "pendingToolUse = None"
        print(f"  save after {len(calls)} tool call(s) had run ({where})")
        your_save(state)

    save_checkpoint = save_and_report
    try:
        with working_in(SCRATCH):  # and back here afterwards, whatever happens
            run_agent(scenario.task, scenario.tools, scenario.model(), tool)
        print(f"The run finished after {len(calls)} tool calls.")
    except StopHere as stop:
        print(f"The run stopped while tool {len(calls)} ({stop}) ran; its result was never recorded.")
    finally:
        save_checkpoint = your_save
    if not (SCRATCH / "checkpoint.json").exists():
        print("There is no checkpoint.json: nothing was saved before the run stopped.")
        return
    on_disk = json.loads((SCRATCH / "checkpoint.json").read_text())
    print("checkpoint.json now holds:")
    for name, value in on_disk.items():
        if name == "messages" and isinstance(value, list):
            roles = ", ".join(m.get("role", "?") for m in value)
            shown = f"{len(value)} messages ({roles})"
        else:
            shown = json.dumps(value)
            shown = shown if len(shown) <= 90 else shown[:87] + "..."
        print(f"  {name}: {shown}")


# %% nbgrader={"grade": false, "grade_id": "l2_try_it", "locked": true, "schema_version": 3, "solution": false}
from graders.notebook import Hints

hint = Hints("02_two_latent_failures", globals())
try_it()

# %% nbgrader={"grade": false, "grade_id": "l2_try_it_stopped", "locked": true, "schema_version": 3, "solution": false}
try_it(stop_while_tool_runs=2)

# %% [markdown] nbgrader={"grade": false, "grade_id": "l2_crash_intro", "locked": true, "schema_version": 3, "solution": false}
# ## Crash it for real
#
# The course's crash harness runs your code in a child process and kills it at a *crash point*:
# while model call *k* is in flight (`killed_during_model_call_k`), while tool *k* runs
# (`killed_during_tool_k`), part-way through the bytes of save *n* (`torn_write_save_n`), or just
# before save *n* renames a file (`killed_before_rename_save_n`). The first cell lists every
# crash point of your code on `support-tickets`; the second kills it at one of them and hands
# whatever `checkpoint.json` it left to the small resume routine, `graders.resume.resume`. The
# second cell is yours to edit: it starts at a crash point your colleague's code survives. Set
# `POINT` to each id from the list in turn and run it again: which ones does it not survive?
#
# (The harness forks this kernel's process, which needs Linux or macOS.)

# %% nbgrader={"grade": false, "grade_id": "l2_crash_points", "locked": true, "schema_version": 3, "solution": false}
from IPython.display import display

from graders.notebook import Submission, crash_points, resume, run_point

for point in crash_points(Submission.from_functions(run_agent, save_checkpoint), "support-tickets"):
    print(f"{point.id:32} {point.label}")

# %% nbgrader={"grade": false, "grade_id": "l2_crash_one", "locked": false, "schema_version": 3, "solution": false}
POINT = "killed_during_model_call_2"  # any crash point from the list above

seen = run_point(Submission.from_functions(run_agent, save_checkpoint), "support-tickets", POINT)
print(f"At {POINT} the run ended: {seen.detail}.")
print("Tools that ran:", ", ".join(entry["name"] for entry in seen.ledger) or "none")
if not seen.checkpoint:
    print("It left no checkpoint.json, or an empty one: nothing to resume from.")
else:
    print(f"It left checkpoint.json with {seen.checkpoint_bytes:,} bytes, ending in:")
    print("   ..." + seen.checkpoint[-120:])
    display(resume(seen.checkpoint))

# %% [markdown] nbgrader={"grade": false, "grade_id": "l2_part1", "locked": true, "schema_version": 3, "solution": false}
# ## Part 1: name the two failures
#
# Find the two places in the code that give way under a crash. For each one, say what in the
# code is wrong, and what it leads to when the process is killed at the wrong moment: what is on
# disk afterwards, and what resume then runs into. The crash cells above are the tools for
# finding them; the lesson's parts 2 and 3 are the ideas.
#
# Then one question more. Another colleague proposes a different loop: one save per turn, made
# just before the tool runs (and none after it). Killed while model call 3 is in flight (both
# tools have finished), what would that loop leave on disk, and what would resume do? And what
# does its checkpoint say once a run has finished without any crash?
#
# Write your answer in the cell below (double-click it to edit), then save the notebook (Ctrl+S):
# the checks read it from the saved file.

# %% [markdown] nbgrader={"grade": true, "grade_id": "l2_name_the_failures", "locked": false, "points": 4, "schema_version": 3, "solution": true}
# ### BEGIN SOLUTION
# **Mark scheme** (four points, one each; the model answer is
# `solutions/02_two_latent_failures.written_answers.md`).
#
# - [ ] First failure: `save_checkpoint` writes `checkpoint.json` itself (an in-place write:
#   `open("checkpoint.json", "w")` then `json.dump`). Opening it for writing empties the file, so
#   a kill during the save leaves a prefix of the new JSON, none of the old: it does not parse.
# - [ ] Second failure: the loop saves once per turn, after the tool result is recorded (save
#   point B) and never between the model asking for a tool and that tool's result (no save point
#   A). A kill while the tool runs leaves the previous turn's save, which says nothing about the
#   call.
# - [ ] What resume runs into, for both: after the torn save it fails on `json.load` with no
#   older save to fall back on, so the task starts over; after the kill during a tool it cannot
#   know the call was made, asks the model again, and the tool runs twice.
# - [ ] Saving only before the tool (save point A alone): killed during model call 3, the newest
#   save is save point A of turn 2, whose `pendingToolUse` names `build_table` although it
#   finished; resume must treat it as unfinished and runs it again. A run that finishes leaves a
#   checkpoint that still names its last call as in flight.
#
# The other done criteria (fix one: temp file then atomic rename; fix two: `pendingToolUse` and a
# save at point A, reset at point B; the fixed code runs) are graded automatically by
# `l2_atomic_save`, `l2_save_point_a` and their hidden checks: do not mark them here.
# ### END SOLUTION

# %% nbgrader={"grade": false, "grade_id": "l2_lock_part1", "locked": true, "schema_version": 3, "solution": false}
from graders.notebook import lock_answer

lock_answer("l2_name_the_failures")

# %% [markdown] nbgrader={"grade": false, "grade_id": "l2_part2", "locked": true, "schema_version": 3, "solution": false}
# ## Part 2: fix them
#
# Change the two answer cells above so that, wherever the process is killed, `checkpoint.json` is
# a save resume can trust: the two weak spots of your part 1 closed. Run them
# again, then `try_it()`, the crash cells and the checks below. The fixed code has to run: the
# checks run it end to end against the fake model, as well as crashed.
#
# How it is checked, one check per failure, each with its own points:
#
# - the first kills your code at every moment of every save (before each write, and part-way
#   through its bytes), then reads `checkpoint.json` as resume would;
# - the second kills your code while each tool runs and while each model call is in flight, then
#   compares `checkpoint.json` with the tools that really ran.
#
# Once part 1 is written and saved, a failing check says what it found on disk and what resume
# ran into; `hint()` says more, one step at a time.

# %% nbgrader={"grade": true, "grade_id": "l2_atomic_save", "locked": true, "points": 3, "schema_version": 3, "solution": false}
# Check: survives a kill during a save. It kills your code at every moment of every save, on
# support-tickets, and reads checkpoint.json each time.
from graders.notebook import run_check

run_check("l2_kill_during_save", globals())

# %% nbgrader={"grade": true, "grade_id": "l2_save_point_a", "locked": true, "points": 3, "schema_version": 3, "solution": false}
# Check: a kill during a tool leaves a true record. It kills your code while each tool runs and
# while each model call is in flight, on support-tickets, and compares checkpoint.json with the
# tools that really ran.
from graders.notebook import run_check

run_check("l2_kill_during_tool", globals())

# %% nbgrader={"grade": true, "grade_id": "l2_atomic_save_hidden", "locked": true, "points": 2, "schema_version": 3, "solution": false}
# Hidden check: the first check's crashes, and more, on a longer scenario when your work is
# graded.
from graders.notebook import run_check

run_check("l2_kill_during_save_hidden", globals())

# %% nbgrader={"grade": true, "grade_id": "l2_save_point_a_hidden", "locked": true, "points": 2, "schema_version": 3, "solution": false}
# Hidden check: the second check's crashes, and more, on a longer scenario when your work is
# graded.
from graders.notebook import run_check

run_check("l2_kill_during_tool_hidden", globals())

# %% [markdown] nbgrader={"grade": false, "grade_id": "l2_self_check_intro", "locked": true, "schema_version": 3, "solution": false}
# ## Self-check
#
# All of this notebook's visible checks at once, in a table, with every crash point that failed. The
# same table is printed in a terminal by `checkpoint-lab check 02_two_latent_failures` (save the
# notebook first). It checks your own copy: in your workspace when you run it from the course's
# folder (where `course.py` is), or in `lesson2/` on a hub, where the Assignments tab fetched it
# (there, from your home folder). The course's website has no terminal: the cell below is its
# self-check.

# %% nbgrader={"grade": false, "grade_id": "l2_self_check", "locked": true, "schema_version": 3, "solution": false}
from graders.notebook import self_check

self_check(globals(), "02_two_latent_failures")

# %% [markdown] nbgrader={"grade": false, "grade_id": "l2_advice", "locked": true, "schema_version": 3, "solution": false}
# ## Beyond the checks (advice, not graded)
#
# - **`tokensUsed` never moves.** Your colleague's loop sets `tokensUsed` to 0 and never adds to
#   it, so every checkpoint says no output tokens were used. That is a third flaw, but not one a
#   crash exposes, and the checks do not grade it: add each response's
#   `response["usage"]["output_tokens"]`, the first model call's included, if you like.
#
# ## Once your checks pass
#
# Copy the solutions into your workspace: in a terminal, `checkpoint-lab solutions 2`, or in a
# cell, `from graders.workspace.solutions import solutions` and then `solutions(2)`. They land in
# `solutions/` in JupyterLab's file browser (a hub and the course's website carry no solutions:
# there your instructor hands them out). Open the walkthrough first,
# `02_two_latent_failures.walkthrough.md`: it sets your colleague's code beside a fixed version,
# line by line, and goes past what the checks can see (several saves at once, and another
# operating system). `02_two_latent_failures.written_answers.md` holds a model answer for part 1, and
# `02_two_latent_failures.py` the fixed code.
#
# Next: parts 4 and 5 of the lesson, then Level 3 (power cuts) and Level 4 (several tool calls in
# one turn), the last two of the four exercises.
