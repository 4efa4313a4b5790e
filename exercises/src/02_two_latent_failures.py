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
# A colleague's agent loop runs a task that calls tools twice in a row. On an ordinary day it
# works. Kill the process part-way through, though, and the checkpoint it leaves either cannot
# be read at all or does not match what really happened. Two spots in the code give way under a
# crash; your job is to find them and fix them.
#
# **By the end you can:**
#
# 1. name the two failures and say what each one leads to (read by your instructor);
# 2. make every save an atomic save, so that a crash can never tear `checkpoint.json`
#    (checked automatically);
# 3. add save point A, so that a crash while a tool runs still leaves a trace of that call on
#    disk (checked automatically);
# 4. crash your own code on purpose and read what it left behind.
#
# Work from top to bottom and run every cell (Shift+Enter). The check cells show how your code
# does right now, as often as you like. When your work is graded, the same checks run again on
# your answer cells in fresh processes, plus hidden checks on a longer task.

# %% [markdown] nbgrader={"grade": false, "grade_id": "l2_code_intro", "locked": true, "schema_version": 3, "solution": false}
# ## The code you received
#
# The two cells below hold your colleague's `save_checkpoint` and `run_agent`, as they are. They
# run: try them first. When you fix them, edit these two cells in place; keep each function at
# the top level of its own cell, under the same name.

# %% nbgrader={"grade": false, "grade_id": "l2_save_checkpoint", "locked": false, "schema_version": 3, "solution": true} checkpoint_lab={"solution_from": "solutions/level2_reference.py:CHECKPOINT,save_checkpoint", "starter_from": "tests/fixtures/submissions/starter_fails_all.py:save_checkpoint"}

# %% nbgrader={"grade": false, "grade_id": "l2_run_agent", "locked": false, "schema_version": 3, "solution": true} checkpoint_lab={"solution_from": "solutions/level2_reference.py:run_agent", "starter_from": "tests/fixtures/submissions/starter_fails_all.py:run_agent"}

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


class StopHere(Exception):
    """Stands in for the process dying while a tool runs."""


def try_it(stop_while_tool_runs=None):
    """Run your loop on support-tickets; show each save and what checkpoint.json holds."""
    global save_checkpoint
    Path("checkpoint.json").unlink(missing_ok=True)
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
        run_agent(scenario.task, scenario.tools, scenario.model(), tool)
        print(f"The run finished after {len(calls)} tool calls.")
    except StopHere as stop:
        print(f"The run stopped while tool {len(calls)} ({stop}) ran; its result was never recorded.")
    finally:
        save_checkpoint = your_save
    if not Path("checkpoint.json").exists():
        print("There is no checkpoint.json: nothing was saved before the run stopped.")
        return
    on_disk = json.loads(Path("checkpoint.json").read_text())
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
try_it()

# %% nbgrader={"grade": false, "grade_id": "l2_try_it_stopped", "locked": true, "schema_version": 3, "solution": false}
try_it(stop_while_tool_runs=2)

# %% [markdown] nbgrader={"grade": false, "grade_id": "l2_crash_intro", "locked": true, "schema_version": 3, "solution": false}
# ## Crash it for real
#
# The course's crash harness runs your code in a child process and kills it at a *crash point*:
# while model call *k* is in flight (`killed_during_model_call_k`), while tool *k* runs
# (`killed_during_tool_k`), halfway through the bytes of save *n* (`torn_write_save_n`), or just
# before save *n* renames a file (`killed_before_rename_save_n`). The first cell lists every
# crash point of your code on `support-tickets`; the second kills it at one of them (change
# `POINT` to try another) and hands whatever `checkpoint.json` it left to the small resume
# routine, `graders.resume.resume`.
#
# (The harness forks this kernel's process, which needs Linux or macOS.)

# %% nbgrader={"grade": false, "grade_id": "l2_crash_points", "locked": true, "schema_version": 3, "solution": false}
from IPython.display import display

from graders import Submission, crash_points, run_point
from graders.resume import resume

for point in crash_points(Submission.from_functions(run_agent, save_checkpoint), "support-tickets"):
    print(f"{point.id:32} {point.label}")

# %% nbgrader={"grade": false, "grade_id": "l2_crash_one", "locked": true, "schema_version": 3, "solution": false}
POINT = "torn_write_save_2"

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
# Find the two spots in the code that give way under a crash. For each one, say what in the code
# is wrong, and what it leads to when the process is killed at the wrong moment: what is on disk
# afterwards, and what resume then runs into. Write your answer in the cell below (double-click
# it to edit).

# %% [markdown] nbgrader={"grade": true, "grade_id": "l2_name_the_failures", "locked": false, "points": 4, "schema_version": 3, "solution": true}
# ### BEGIN SOLUTION
# **Mark scheme** (two points per failure: one for naming it, one for what it leads to; the
# model answer is `solutions/level2_written_answers.md`).
#
# - [ ] First failure: `save_checkpoint` overwrites the same file in place (an in-place write,
#   `open("checkpoint.json", "w")` then `json.dump`), so an interrupted write leaves half a JSON
#   document that cannot be parsed, and there is no older version to fall back on.
# - [ ] Second failure: the loop saves only after the tool result is recorded (save point B),
#   with no save between the model naming a tool and the tool finishing (save point A), so a
#   crash in that window leaves no trace of the tool call on disk.
#
# The other done criteria (fix one: temp file then atomic rename; fix two: `pendingToolUse` and a
# save at point A, reset at point B; the fixed code runs) are graded automatically by
# `l2_atomic_save`, `l2_save_point_a` and their hidden checks: do not mark them here.
# ### END SOLUTION

# %% [markdown] nbgrader={"grade": false, "grade_id": "l2_part2", "locked": true, "schema_version": 3, "solution": false}
# ## Part 2: fix them
#
# Fix both failures in the two answer cells above, then run them again, run `try_it()` and the
# crash cells, and the checks below. The fixed code has to run: the checks run it end to end
# against the fake model, as well as crashed.
#
# - **Fix one, the save.** Make every save an *atomic save*: write the complete checkpoint to a
#   temp file in the same folder as `checkpoint.json`, then rename it over `checkpoint.json` with
#   `os.replace`. Renaming within one filesystem swaps the file in one step: at any moment
#   `checkpoint.json` is either the old complete save or the new one.
# - **Fix two, the loop.** Add *save point A*: after reading the model's `tool_use` block and
#   before calling `execute_tool`, set `state["pendingToolUse"]` to the call's
#   `{"id", "name", "input"}` and save. At save point B, set it back to `None` before saving.
#
# Each fix earns its own points: the atomic save is checked by tearing saves and killing the
# process just before renames, save point A by killing it while tools run and while the model is
# called.

# %% nbgrader={"grade": true, "grade_id": "l2_atomic_save", "locked": true, "points": 3, "schema_version": 3, "solution": false}
# Check: an atomic save. It tears every save of your code part-way and kills it just before
# every rename, on support-tickets, and reads checkpoint.json after each crash.
from graders.checks import run_check

run_check("l2_atomic_save", globals())

# %% nbgrader={"grade": true, "grade_id": "l2_save_point_a", "locked": true, "points": 3, "schema_version": 3, "solution": false}
# Check: save point A. It kills your code while each tool runs and while each model call is in
# flight, on support-tickets, and compares checkpoint.json with the tools that really ran.
from graders.checks import run_check

run_check("l2_save_point_a", globals())

# %% nbgrader={"grade": true, "grade_id": "l2_atomic_save_hidden", "locked": true, "points": 2, "schema_version": 3, "solution": false}
# Hidden check: runs the whole crash matrix for the save on a longer scenario when your work is
# graded.
from graders.checks import run_check

run_check("l2_atomic_save_hidden", globals())

# %% nbgrader={"grade": true, "grade_id": "l2_save_point_a_hidden", "locked": true, "points": 2, "schema_version": 3, "solution": false}
# Hidden check: runs the whole crash matrix for the save points on a longer scenario when your
# work is graded.
from graders.checks import run_check

run_check("l2_save_point_a_hidden", globals())

# %% [markdown] nbgrader={"grade": false, "grade_id": "l2_self_check_intro", "locked": true, "schema_version": 3, "solution": false}
# ## Self-check
#
# All of this notebook's visible checks at once, in a table, with every crash point that failed.
# The same table is printed in a terminal by
# `checkpoint-lab check 02_two_latent_failures.ipynb`.

# %% nbgrader={"grade": false, "grade_id": "l2_self_check", "locked": true, "schema_version": 3, "solution": false}
from graders.selfcheck import self_check

self_check(globals(), "02_two_latent_failures")

# %% [markdown] nbgrader={"grade": false, "grade_id": "l2_advice", "locked": true, "schema_version": 3, "solution": false}
# ## Beyond the checks (advice, not graded)
#
# - **`tokensUsed` never moves.** Your colleague's loop sets `tokensUsed` to 0 and never adds to
#   it, so every checkpoint says no tokens were spent and the compaction threshold is judged
#   against nothing. Add each response's `response["usage"]["output_tokens"]`, the first model
#   call's included (the lesson's own loop forgets that one).
# - **A killed process is not a power cut.** After `os.replace` the new file survives the process
#   being killed, because the operating system still holds its bytes. To survive losing power
#   too, call `f.flush()` and `os.fsync(f.fileno())` before the rename, and fsync the folder after
#   it. The checks here kill processes; they cannot cut the power, so they cannot tell whether
#   you did.
# - **A fixed temp name can collide.** Two writers using `checkpoint.json.tmp` overwrite each
#   other's temp file; `tempfile.mkstemp(dir=...)` gives each save a unique name. Keep the temp
#   file in the checkpoint's own folder: a rename across filesystems is not atomic, and fails.
# - **`os.replace`, not `os.rename`.** On Windows `os.rename` fails when `checkpoint.json` already
#   exists.
# - **Several tool calls in one turn.** The Messages API allows several `tool_use` blocks in one
#   response, each needing its `tool_result`; `pendingToolUse` then becomes a list.
#
# When you have tried everything yourself: `solutions/level2_written_answers.md` holds a model
# answer for part 1, and `solutions/level2_reference.py` the fixed code.
