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

# %% [markdown] nbgrader={"grade": false, "grade_id": "l1_intro", "locked": true, "schema_version": 3, "solution": false}
# # Level 1: an incomplete checkpoint
#
# A checkpoint is only as good as what it holds. In this exercise you meet a `save_checkpoint`
# that writes the conversation and nothing else, and you find out what a restarted loop is left
# without.
#
# **By the end you can:**
#
# 1. name the five fields this checkpoint leaves out (checked automatically);
# 2. say, for each of them, where exactly resume falls over without it (read by your instructor);
# 3. complete `save_checkpoint` so that `checkpoint.json` holds all six fields (checked
#    automatically);
# 4. point a small resume routine at your checkpoint and watch what it runs into.
#
# Work from top to bottom and run every cell (Shift+Enter). The cells with a check in them show
# how your answer does right now; you can run them as often as you like. Your grade is worked
# out again, from your answer cells, when your work is graded.
#
# **Stuck?** Run `hint()` in a new cell: it shows a hint for the first check that does not pass
# yet, a nudge first, and the same hint each time the cell runs; `hint(next=True)` opens the next
# one (the idea, then code). How many you opened is noted in the notebook for your instructor;
# it does not change your grade.

# %% [markdown] nbgrader={"grade": false, "grade_id": "l1_six_fields", "locked": true, "schema_version": 3, "solution": false}
# ## From memory
#
# Part 1 of the lesson named the six fields a checkpoint holds, and what resume runs into
# without each. This exercise asks you to recall them: try it before you look back at the
# lesson.

# %% [markdown] nbgrader={"grade": false, "grade_id": "l1_received_intro", "locked": true, "schema_version": 3, "solution": false}
# ## The save you received
#
# A colleague wrote this `save_checkpoint`. It runs, and it writes `checkpoint.json` in the
# current folder. Run the cell as it is for now: you come back to complete it in part 3.

# %% nbgrader={"grade": false, "grade_id": "l1_save_checkpoint", "locked": false, "schema_version": 3, "solution": true} checkpoint_lab={"solution_from": "solutions/01_incomplete_checkpoint.py:save_checkpoint", "starter_from": "tests/fixtures/01_incomplete_checkpoint/starter.py:save_checkpoint"}

# %% [markdown] nbgrader={"grade": false, "grade_id": "l1_loop_intro", "locked": true, "schema_version": 3, "solution": false}
# The loop below is the lesson's own loop. It saves twice per turn: at save point A (a tool has
# been asked for and has not started) and at save point B (its result has been appended to
# `messages`); part 2 of the lesson looks at those two moments closely. It calls whatever
# `save_checkpoint` you defined above. Nothing to change here: run it.

# %% nbgrader={"grade": false, "grade_id": "l1_loop", "locked": true, "schema_version": 3, "solution": false}
def run_agent(task, tools, call_model, execute_tool):
    state = {
        "version": 1,
        "task": task,
        "turns": 0,
        "tokensUsed": 0,
        "messages": [{"role": "user", "content": task}],
        "pendingToolUse": None,
    }
    while True:
        response = call_model(tools=tools, messages=state["messages"])
        state["tokensUsed"] += response["usage"]["output_tokens"]
        if response["stop_reason"] != "tool_use":
            return state
        call = next(b for b in response["content"] if b["type"] == "tool_use")
        state["messages"].append({"role": "assistant", "content": response["content"]})
        state["pendingToolUse"] = {"id": call["id"], "name": call["name"], "input": call["input"]}
        # Save point A: the call is named; it has not run yet.
        save_checkpoint(state)
        output = execute_tool(call["name"], call["input"])
        state["messages"].append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": call["id"], "content": output}]})
        state["pendingToolUse"] = None
        state["turns"] += 1
        # Save point B: its result is recorded.
        save_checkpoint(state)


# %% [markdown] nbgrader={"grade": false, "grade_id": "l1_try_it_intro", "locked": true, "schema_version": 3, "solution": false}
# ## Try it
#
# `try_it()` runs the loop with your `save_checkpoint` against the course's fake model, on the
# `support-tickets` scenario (the model lists last quarter's tickets, then builds the table:
# two tool calls), and shows what ended up in `checkpoint.json`.
#
# `try_it(stop_while_tool_runs=2)` stops the run while the second tool runs, the way a crash
# would: the loop never records that tool's result. (The course's grader really kills the process
# at that moment; here an exception stands in for the kill so that the notebook keeps running.)

# %% nbgrader={"grade": false, "grade_id": "l1_try_it_helper", "locked": true, "schema_version": 3, "solution": false}
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
    """Run the loop on support-tickets with your save_checkpoint; show checkpoint.json."""
    (SCRATCH / "checkpoint.json").unlink(missing_ok=True)
    scenario = fake_llm.load_scenario("support-tickets")
    execute_tool = scenario.executor()
    calls = []

    def tool(name, tool_input):
        calls.append(name)
        result = execute_tool(name, tool_input)
        if len(calls) == stop_while_tool_runs:
            raise StopHere(name)
        return result

    try:
        with working_in(SCRATCH):  # and back here afterwards, whatever happens
            run_agent(scenario.task, scenario.tools, scenario.model(), tool)
        print(f"The run finished after {len(calls)} tool calls.")
    except StopHere as stop:
        print(f"The run stopped while tool {len(calls)} ({stop}) ran; its result was never recorded.")
    if not (SCRATCH / "checkpoint.json").exists():
        print("There is no checkpoint.json: save_checkpoint never wrote one.")
        return
    on_disk = json.loads((SCRATCH / "checkpoint.json").read_text())
    print(f"checkpoint.json holds {len(on_disk)} field(s):")
    for name, value in on_disk.items():
        if name == "messages" and isinstance(value, list):
            roles = ", ".join(m.get("role", "?") for m in value)
            shown = f"{len(value)} messages ({roles})"
        else:
            shown = json.dumps(value)
            shown = shown if len(shown) <= 90 else shown[:87] + "..."
        print(f"  {name}: {shown}")


# %% nbgrader={"grade": false, "grade_id": "l1_try_it", "locked": true, "schema_version": 3, "solution": false}
from graders.notebook import Hints

hint = Hints("01_incomplete_checkpoint", globals())
try_it()

# %% [markdown] nbgrader={"grade": false, "grade_id": "l1_part1", "locked": true, "schema_version": 3, "solution": false}
# ## Part 1: which fields are missing?
#
# Compare what `try_it()` showed with the six fields of the protocol. In the cell below, set
# `MISSING_FIELDS` to the set of the fields this checkpoint lacks, each as a string spelled
# exactly as the checkpoint spells its keys, for example `{"a", "b"}`. Then run the check under
# it.

# %% nbgrader={"grade": false, "grade_id": "l1_missing_fields_answer", "locked": false, "schema_version": 3, "solution": true} checkpoint_lab={"solution_from": "solutions/01_incomplete_checkpoint.py:MISSING_FIELDS", "starter_from": "tests/fixtures/01_incomplete_checkpoint/starter.py:MISSING_FIELDS"}

# %% nbgrader={"grade": true, "grade_id": "l1_missing_fields", "locked": true, "points": 2, "schema_version": 3, "solution": false}
# Check: the five missing fields. Run it to see how your answer does.
from graders.notebook import run_check

run_check("l1_missing_fields", globals())

# %% [markdown] nbgrader={"grade": false, "grade_id": "l1_part2", "locked": true, "schema_version": 3, "solution": false}
# ## Part 2: where does resume fall over?
#
# Suppose the process died and a restarted loop had only this checkpoint to go on. For **each**
# of the five missing fields, say where exactly resume falls over without it: what can it no
# longer decide or do, and what goes wrong as a result? A sentence or two per field is enough.
# Write your answer in the cell below (double-click it to edit; Shift+Enter to show it).

# %% [markdown] nbgrader={"grade": true, "grade_id": "l1_where_resume_falls_over", "locked": false, "points": 5, "schema_version": 3, "solution": true}
# ### BEGIN SOLUTION
# **Mark scheme** (five points, one per missing field: the answer says where resume falls over
# without it; naming the five fields is graded automatically by `l1_missing_fields`, do not mark
# it here; the model answer is `solutions/01_incomplete_checkpoint.written_answers.md`).
#
# - [ ] `version`: resume cannot tell which protocol version wrote the file, so once the format
#   changes it has no basis for refusing a checkpoint it does not understand.
# - [ ] `task`: the restarted harness cannot tell which task the saved conversation is for, nor
#   report to anyone what it is resuming.
# - [ ] `turns`: the count restarts at zero after resume and no longer matches the turns really
#   run, so a max-turn cap fires late (counting from zero, it allows a full cap more turns) or
#   never, on a task that keeps crashing.
# - [ ] `tokensUsed`: the count of output tokens so far restarts at zero (it could only be
#   re-estimated from the assistant messages, not exactly), so a budget or a threshold judged on
#   it (the protocol's compaction threshold) fires late or never.
# - [ ] `pendingToolUse`: if the crash came after the model named a tool and before its result
#   was recorded, resume cannot see that a call was left dangling and cannot reconcile it (the
#   course's next lesson, *Resuming from a checkpoint*).
# ### END SOLUTION

# %% [markdown] nbgrader={"grade": false, "grade_id": "l1_part3", "locked": true, "schema_version": 3, "solution": false}
# ## Part 3: save all six
#
# Go back to the `save_checkpoint` cell under "The save you received" and complete it, so that
# `checkpoint.json` holds all six fields, each with the value the loop holds in `state` at the
# moment of the save. Keep the name `save_checkpoint`, and keep writing `checkpoint.json` in the
# current folder. Run that cell again, then run `try_it()` below and the check.
#
# How to write the file so that a crash cannot tear it is Level 2's subject; here an ordinary
# write is fine.

# %% nbgrader={"grade": false, "grade_id": "l1_try_it_again", "locked": true, "schema_version": 3, "solution": false}
try_it()

# %% nbgrader={"grade": true, "grade_id": "l1_saves_all_six", "locked": true, "points": 3, "schema_version": 3, "solution": false}
# Check: save_checkpoint saves all six fields. It runs your save with the loop above, to the end
# and killed while the second tool runs, and reads checkpoint.json back.
from graders.notebook import run_check

run_check("l1_saves_all_six", globals())

# %% [markdown] nbgrader={"grade": false, "grade_id": "l1_part4", "locked": true, "schema_version": 3, "solution": false}
# ## Part 4: watch resume fall over
#
# `graders.resume.resume` is a small resume routine (the course's next lesson, *Resuming from a
# checkpoint*, builds the real one). Give it a
# checkpoint (a path, JSON text or a dict) and it tries to carry on from it against the fake
# model, then reports what it did and where it fell over.
#
# First, stop a run while the second tool runs and resume from what your save left behind.
# Before you run the cell, say to yourself what resume will do with the starter's save, and what
# it would do with all six fields; then run it, and run it again once your save passes.

# %% nbgrader={"grade": false, "grade_id": "l1_resume_after_stop", "locked": true, "schema_version": 3, "solution": false}
from graders.notebook import resume

try_it(stop_while_tool_runs=2)
resume(SCRATCH / "checkpoint.json")

# %% [markdown] nbgrader={"grade": false, "grade_id": "l1_resume_field_by_field_intro", "locked": true, "schema_version": 3, "solution": false}
# Now take your checkpoint and remove one field at a time (and, last, pretend it was written by
# a version 2 that this resume does not know). Compare what resume runs into with what you wrote
# in part 2.

# %% nbgrader={"grade": false, "grade_id": "l1_resume_field_by_field", "locked": true, "schema_version": 3, "solution": false}
saved = json.loads((SCRATCH / "checkpoint.json").read_text())
cases = {f"without {name}": {k: v for k, v in saved.items() if k != name}
         for name in ["version", "task", "turns", "tokensUsed", "messages", "pendingToolUse"]}
cases["written by version 2"] = {**saved, "version": 2}
for label, checkpoint in cases.items():
    report = resume(checkpoint)
    print(f"{label}: {report.outcome}")
    for problem in report.problems:
        print(f"  - {problem}")

# %% [markdown] nbgrader={"grade": false, "grade_id": "l1_self_check_intro", "locked": true, "schema_version": 3, "solution": false}
# ## Self-check
#
# All of this notebook's automatic checks at once, in a table. The same table is printed in a
# terminal by `checkpoint-lab check 01_incomplete_checkpoint` (save the notebook first). It checks
# your own copy: in your workspace when you run it from the course's folder (where `course.py` is),
# or in `lesson2/` on a hub, where the Assignments tab fetched it (there, from your home folder).
# The course's website has no terminal: the cell below is its self-check.

# %% nbgrader={"grade": false, "grade_id": "l1_self_check", "locked": true, "schema_version": 3, "solution": false}
from graders.notebook import self_check

self_check(globals(), "01_incomplete_checkpoint")

# %% [markdown] nbgrader={"grade": false, "grade_id": "l1_next", "locked": true, "schema_version": 3, "solution": false}
# ## What's next
#
# Your save now keeps all six fields. Having the right fields is not the whole story, though:
# Level 2 (`02_two_latent_failures.ipynb`, after part 3 of the lesson) hands you a whole loop
# whose checkpoint has all six and still lets a restarted loop down, if the process is killed at
# the wrong moment. Levels 3 and 4 follow parts 4 and 5 of the lesson: four exercises in all.
#
# When you have tried everything yourself, `solutions/01_incomplete_checkpoint.written_answers.md` holds a model
# answer for part 2, and `solutions/01_incomplete_checkpoint.py` a completed save.
