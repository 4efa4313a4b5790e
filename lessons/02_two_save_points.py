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
# # Checkpoints · Part 2 of 6: the two save points
#
# [Part 1](01_the_execution_scene_and_six_fields.ipynb) settled *what* goes into
# `checkpoint.json`. This part is about *when* it is written. "Once at the end of every turn"
# sounds enough; it is not. A loop turn has two moments that each need a save.

# %% [markdown]
# ## The loop, with both save points
#
# This is the lesson's own loop (the exercises come with loops of their own):

# %%
from graders.teaching.code_view import show_code
from graders.teaching.variants import lesson_function

show_code(lesson_function("run_agent", save_points="A and B"), language="python")

# %% [markdown]
# - **Save point A** comes after the model's response arrives and before the tool runs: the
#   `tool_use` block goes into `pendingToolUse`, then the state is saved.
# - **Save point B** comes after the tool's result is appended to `messages`: `pendingToolUse` goes
#   back to `None`, `turns` counts the finished turn, and the state is saved again.
#
# ## Is B alone enough?
#
# Take save point A out, so the loop saves once per turn, at B. The same process is killed while
# tool 2 (`build_table`) runs, and then resumed from whatever `checkpoint.json` holds.

# %%
from graders.teaching.predict import compare, predict

predict("b_only_runs_twice")

# %%
from graders.harness import Harness
from graders.resume import resume
from graders.teaching.scene import ledger_lines
from graders.teaching.variants import variant

with Harness(variant("B only", "temp + rename")) as harness:
    b_only = harness.run_point("support-tickets", "killed_during_tool_2")

after = resume(b_only.checkpoint)
print("Before the crash the tools ran:", "; ".join(ledger_lines(b_only.ledger)))
print("After it, resume ran:          ", "; ".join(ledger_lines(after.ledger)))
compare("b_only_runs_twice")

# %% [markdown]
# Think about what a B-only loop can never record. Once the model has asked for a tool, there is
# a stretch of time in which that call exists only in memory: while the tool runs, and even after
# it returns, until its result is appended and saved. If the process dies anywhere in that
# stretch, the newest file on disk was written at the end of the *previous* turn. It is not a
# wrong record of the call; it is no record at all.
#
# Finding out, after a restart, whether an interrupted call finished (and whether it may safely
# run again) is the subject of the course's next lesson, *Resuming from a checkpoint*. Whatever
# method it uses needs something to start from: the `pendingToolUse` that save point A put on
# disk. A loop that never saves at A hands it an empty field.
#
# ## The crash timeline
#
# Below is every moment of a real run of `support-tickets`: each model call, each save, each tool
# running. Pick where the process dies, and which loop runs:
#
# - **Save points**: "B only", "A only" or "A and B": which of the loop's two
#   `save_checkpoint(state)` lines it keeps. Nothing else changes between the three: the same
#   loop, the same token counting.
# - **Write mode**: "in place" (a save that writes straight over `checkpoint.json`) or
#   "temp + rename" (the atomic save [part 3](03_atomic_save.ipynb) explains).
#
# Each combination is a real loop, and every view is what the crash harness found on disk after
# really killing that loop at that moment, with what a resume concludes from it. (The six loops
# run once, here, in about two seconds.)

# %%
from graders.teaching.timeline import build_timeline
from graders.teaching.widgets import show_timeline

timeline = build_timeline("support-tickets")
show_timeline(timeline, moment="tool_2", save_points="B only", write_mode="in place")

# %% [markdown]
# Things to try (predict each before you click):
#
# 1. It opens on "B only", "in place", killed while tool 2 (`build_table`) runs. What does the
#    disk hold, and what will resume do? Now switch to "A and B".
# 2. Move the crash to moment 4, halfway through save point B of turn 1, with "in place". Then
#    switch to "temp + rename". What changed on disk, and what lies beside `checkpoint.json`?
# 3. With "B only", some moments in the strip are greyed out: why does that loop not save there?
# 4. Choose "A only" and move the crash to moment 5, model call 2: tool 1 has finished by then.
#    What does `pendingToolUse` say, and what will resume do with `list_tickets`?
#
# Where the timeline cannot be shown (a viewer without widgets), its table is printed instead. The
# same facts, as plain text, for two moments:

# %%
for moment in ("tool_2", "model_call_3"):
    for save_points in ("B only", "A only", "A and B"):
        state = timeline.state(moment, save_points, "temp + rename")
        print(f"{save_points:8} killed at {state.moment.short}: {state.disk.headline}")
        print(f"{'':8} resume: {state.conclusion}")
    print()

# %% [markdown]
# Saving at only one of the two points is a trade of blind spots. With B alone, a call in flight
# leaves no mark, and resume repeats it without knowing. With A alone, a call that *finished*
# still looks unfinished, because nothing recorded its result: resume cannot tell the two apart
# and has to treat it as unfinished, so a call that already ran (and changed the world) runs
# again. Both saves together give resume the whole story.
#
# ## Check yourself

# %%
from graders.teaching.widgets import show_quiz

show_quiz("b_only_tool_window")

# %%
show_quiz("a_only_after_result")

# %% [markdown]
# Next: [part 3, the atomic save](03_atomic_save.ipynb): the torn JSON above, and how to make
# it impossible.
