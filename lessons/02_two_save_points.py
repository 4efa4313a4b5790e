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
# # Checkpoints · Part 2 of 7: the two save points
#
# **Time:** about 25 minutes.
# **Questions:** When in a loop turn must the checkpoint be written? What does a loop that saves
# at only one of those moments leave you exposed to?
# **Objectives:** place save points A and B in a loop turn; say what a B-only loop and an A-only
# loop each leave on disk when killed, and what resume then does.
#
# [Part 1](01_the_execution_scene_and_six_fields.ipynb) settled *what* goes into
# `checkpoint.json`; this part is about *when*. "Once per turn" sounds enough; it is not.

# %% [markdown]
# ## The loop, with both save points
#
# This is the lesson's own loop (the exercises come with loops of their own):

# %%
from graders.notebook import lesson_function, show_code

show_code(lesson_function("run_agent", save_points="A and B"), language="python")

# %% [markdown]
# - **Save point A**, before the tool runs: the `tool_use` block goes into `pendingToolUse`, and
#   the state is saved.
# - **Save point B**, once the result is in `messages`: `pendingToolUse` back to `None`, `turns`
#   counts the turn, and the state is saved again.
#
# ## Is B alone enough?
#
# Take save point A out. The process is killed while tool 2 (`build_table`) runs, then resumed
# from `checkpoint.json`.

# %%
from graders.notebook import compare, predict

predict("b_only_runs_twice")

# %%
from graders.notebook import Harness, ledger_lines, resume, variant

with Harness(variant("B only", "temp + rename")) as harness:
    b_only = harness.run_point("support-tickets", "killed_during_tool_2")

after = resume(b_only.checkpoint)
print("Before the crash the tools ran:", "; ".join(ledger_lines(b_only.ledger)))
print("After it, resume ran:          ", "; ".join(ledger_lines(after.ledger)))
compare("b_only_runs_twice")

# %% [markdown]
# From the moment the model asks for a tool until its result is saved, a B-only loop holds the
# call in memory only. Killed in that window, the newest file is from the *previous* turn: no
# record of the call at all. Reconciling an interrupted call (the next lesson) starts from the
# `pendingToolUse` that save point A writes.
#
# ## Is A alone enough?
#
# Now the loop saves only at A, before each tool. It is killed while model call 3 is in flight,
# after both tools finished.

# %%
predict("a_only_finished_runs_twice")

# %%
with Harness(variant("A only", "temp + rename")) as harness:
    a_only = harness.run_point("support-tickets", "killed_during_model_call_3")
    a_only_done = harness.run_point("support-tickets", "no_crash")

after = resume(a_only.checkpoint)
print("checkpoint.json names as in flight:", a_only.state["pendingToolUse"]["name"])
print("Before the crash the tools ran:    ", "; ".join(ledger_lines(a_only.ledger)))
print("After it, resume ran:              ", "; ".join(ledger_lines(after.ledger)))
compare("a_only_finished_runs_twice")

# %% [markdown]
# A call that *finished* still looks unfinished, so it runs again. Even a run that finishes with
# no crash leaves such a checkpoint behind:

# %%
print("After a finished run, pendingToolUse names:",
      a_only_done.state["pendingToolUse"]["name"])

# %% [markdown]
# A supervisor restarting from that file would run `build_table` once more (neither loop here
# writes "done"; a real harness would). One save point trades one blind spot for the other.
# Together they shrink the blind spot to a narrow window, which the timeline below shows.
#
# ## The crash timeline
#
# Every moment of a real run of `support-tickets`. Pick where the process dies, which save
# points the loop keeps, and its write mode ("in place", or "temp + rename" from
# [part 3](03_atomic_save.ipynb)). Each view is what the harness found on disk after really
# killing that loop there (six loops, run once, in about two seconds).

# %%
from graders.notebook import build_timeline, show_timeline

timeline = build_timeline("support-tickets")
show_timeline(timeline, moment="tool_2", save_points="B only", write_mode="in place")

# %% [markdown]
# Things to try (predict before you click):
#
# 1. "B only", killed while tool 2 runs: what does resume do? Now "A and B".
# 2. Moment 4, part-way through save point B of turn 1, "in place"; then "temp + rename". What
#    changed, and what lies beside `checkpoint.json`?
# 3. With "B only", some moments in the strip are striped: why does that loop not save there?
# 4. "A only" at moment 5: what does `pendingToolUse` say about `list_tickets`?
# 5. "A and B", "temp + rename", moment 8: which tool runs twice, and why?
#
# ## Even A and B can run a tool twice
#
# Take the loop this part recommends: both save points, and "temp + rename". Kill it at moment 4,
# while save point B of turn 1 is being written: `list_tickets` has returned, and its result is
# in memory. Before you run the next cell, write down what `checkpoint.json` holds then, and what
# resume will do with it.

# %%
show_timeline(timeline, moment="save_B_1", save_points="A and B", write_mode="temp + rename")

# %% [markdown]
# The file is still save point A of turn 1, whose `pendingToolUse` names `list_tickets`. Resume
# cannot tell "named, never run" from "ran, result not saved yet", so it runs the tool a second
# time. No placement of saves closes this window: the tool's effect and the save that records it
# are two steps, and a kill can fall between them. So a tool runs *at least once*, not exactly
# once, and resume has to *reconcile* a pending call instead of simply running it again: find
# out whether the call already took effect. The one name both sides share is the call's
# `tool_use` id; passed to the tool as an idempotency key, it lets the tool say "done already".
# The next lesson, *Resuming from a checkpoint*, builds that.
#
# ## Check yourself

# %%
from graders.notebook import show_quiz

show_quiz("b_only_tool_window")

# %%
show_quiz("a_only_finished_run")

# %% [markdown]
# ## Now change it
#
# Pick a loop and a crash point (`killed_during_tool_k`, k = 1, 2; `killed_during_model_call_k`,
# k = 1 to 3; `torn_write_save_n`, n up to 2 saves, or 4 with both save points). Predict, then
# run.

# %%
from graders.notebook import describe_run, say

save_points, write_mode, point = "A only", "in place", "torn_write_save_2"
with Harness(variant(save_points, write_mode)) as harness:
    seen = harness.run_point("support-tickets", point)
print(describe_run(seen))
say("Resume:", resume(seen.checkpoint).outcome)

# %% [markdown]
# ## Glossary
#
# - **save point A**: the save once a tool is named, before it runs.
# - **save point B**: the save once its result is recorded.
# - **in flight**: named by the model, its result not recorded yet.
# - **crash point**: where the harness kills a run (`killed_during_tool_2`).
# - **crash timeline**: the widget above.

# %% [markdown]
# ## Key points
#
# - A loop turn has two save points: A, before the named tool runs; B, once its result is
#   recorded.
# - B alone: a call in flight leaves no trace, and resume runs it again unknowingly.
# - A alone: a finished call still looks in flight and runs again; even a finished run leaves a
#   checkpoint naming a call in flight.
# - Both together tell resume which call started and whether its result was recorded.
#
# Next: [part 3, the atomic save](03_atomic_save.ipynb): the torn JSON above, and how to make
# it impossible.
