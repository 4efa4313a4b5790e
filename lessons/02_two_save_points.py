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
# # Lesson 2 · Part 2: the two save points
#
# [Part 1](01_the_execution_scene_and_six_fields.ipynb) settled *what* goes into
# `checkpoint.json`. This part is about *when* it is written. "Once at the end of every turn"
# sounds enough; it is not. A loop turn has two moments that each need a save.

# %% [markdown]
# ## The loop, with both save points
#
# This is the course's reference loop (`solutions/level2_reference.py`), the lesson's loop in
# Python:

# %%
from IPython.display import Code

from graders.teaching.variants import function_source

Code(function_source("reference", "run_agent"), language="python")

# %% [markdown]
# - **Save point A** comes after the model's response arrives and before the tool runs: the
#   `tool_use` block goes into `pendingToolUse`, then the state is saved.
# - **Save point B** comes after the tool's result is appended to `messages`: `pendingToolUse` goes
#   back to `None`, `turns` counts the finished turn, and the state is saved again.
#
# ## Is B alone enough?
#
# The starter you will fix in the exercises saves only at B. Its exposure is the window between
# A and B: the model has named a tool, and the tool is running (or has finished, but its result is
# not recorded and not on disk). Die in that window and the newest checkpoint is the one B wrote
# in the *previous* turn. It does not describe this turn's call wrongly; it does not describe it
# at all. The call leaves no trace on disk.
#
# Lesson 3 reconciles on resume (did that tool finish? must it run again?), and what it reconciles
# against is the `pendingToolUse` that save point A wrote. A B-only loop leaves it nothing.
#
# ## The crash timeline
#
# Below is every moment of a real run of `support-tickets`: each model call, each save, each tool
# running. Pick where the process dies, and which loop runs:
#
# - **Save points**: "B only" (the starter's loop) or "A and B" (the reference's);
# - **Write mode**: "in place" (the starter's `save_checkpoint`, which overwrites `checkpoint.json`)
#   or "temp + rename" (the reference's atomic save; [part 3](03_atomic_save.ipynb) explains it).
#
# Each toggle swaps one function, so the four combinations are four real submissions, and every
# view is what the crash harness found on disk after really killing that loop at that moment,
# with what the reference resume concludes from it. (The four loops run once, here, in about a
# second.)

# %%
from graders.teaching.timeline import build_timeline
from graders.teaching.widgets import show_timeline

timeline = build_timeline("support-tickets")
show_timeline(timeline, moment="tool_2", save_points="B only", write_mode="in place")

# %% [markdown]
# Things to try:
#
# 1. It opens on the starter ("B only", "in place") killed while tool 2 (`build_table`) runs:
#    **no trace** of the call in flight. The checkpoint is the save after turn 1, `pendingToolUse`
#    is `null`, and resume will ask the model again and run `build_table` a second time.
# 2. Switch to "A and B": the checkpoint now names `build_table` in `pendingToolUse`. Resume
#    knows exactly which call was in flight.
# 3. Move the crash to moment 4, halfway through save point B of turn 1, with "in place": **torn
#    JSON**, a file that is neither the old save nor the new one. Switch to "temp + rename": the
#    previous save (save point A of the same turn) is intact, and beside it lies a half-written
#    temp file, which resume ignores.
# 4. With "B only", the moments "save point A" are greyed out in the strip: that loop does not
#    save there.
#
# What the "save points" toggle changes, line by line (the reference also counts `tokensUsed`,
# which the starter forgets; the "write mode" toggle swaps `save_checkpoint` the same way, and
# part 3 shows both versions):

# %%
from graders.teaching.variants import toggle_diff

Code(toggle_diff("save points"), language="diff")

# %% [markdown]
# Where the timeline cannot be shown (a viewer without widgets), its table is printed instead. The
# same facts, as plain text, for the moment the starter's exposure is worst:

# %%
for save_points in ("B only", "A and B"):
    state = timeline.state("tool_2", save_points, "temp + rename")
    print(f"{save_points:8} killed while tool 2 runs -> {state.disk.headline}")
    print(f"{'':8} resume: {state.conclusion}")

# %% [markdown]
# What B-only sets you up for is the exercise in Lesson 6: a B-only checkpoint in front of you,
# and a resume to diagnose. Here, the hole is dug.
#
# ## Check yourself

# %%
from graders.teaching.widgets import show_quiz

show_quiz("b_only_tool_window")

# %% [markdown]
# Next: [part 3, the atomic save](03_atomic_save.ipynb): the torn JSON above, and how to make
# it impossible.
