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
# # Checkpoints · Part 5 of 7: several tool calls in one turn
#
# **Time:** about 20 minutes.
# **Questions:** What changes in the checkpoint when one model response asks for several tools?
# What must it hold if those tools run at the same time?
# **Objectives:** write the results of a multi-call turn back as the API requires; say what
# `pendingToolUse` holds at each moment of such a turn, and what resume does with each call.
#
# *Beyond the source lesson*, which says in passing that `pendingToolUse` then "becomes a list",
# with the same reasoning. The list is right; the reasoning is not quite the same.
# [Level 4](../exercises/04_parallel_tool_calls.ipynb) practises this part.
#
# ## What the API asks for
#
# One response may hold several `tool_use` blocks: the logs, the metrics and the deploys of a
# service, asked for at once. Every block needs its `tool_result`, all in the one user message
# that follows; one missing, or spread over two messages, and the API answers 400. It pairs each
# result with its call by `tool_use_id`, so their order is free: this course writes them in the
# order of the blocks, as a habit, and its checks accept any order. One order *is* fixed: in
# that message the `tool_result` blocks come first, before any text block (a note written
# before them is refused too, by the API and by the course's fake model).
#
# ## What the checkpoint must hold
#
# With one call per turn, a crash leaves one call in doubt and nothing finished to lose. With
# three, it can strike while the third runs, after two returned. Suppose the loop lists the
# turn's calls in `pendingToolUse` before the first runs, and saves each result as its tool
# returns:

# %%
from graders.notebook import compare, predict

predict("three_calls_killed_during_tool_3")

# %%
import json

from graders.notebook import say, show_turn, turn_moments

moments = turn_moments("incident-triage", turn=1)
during_tool_3 = next(m for m in moments if m.label.startswith("tool 3"))
for entry in during_tool_3.checkpoint["pendingToolUse"]:
    shown = {k: entry[k] for k in ("name", "input")}
    if "result" in entry:
        shown["result"] = entry["result"][:30] + "..."
    say(json.dumps(shown))
say("Killed here, resume", during_tool_3.resume + ".")
compare("three_calls_killed_during_tool_3")

# %% [markdown]
# Results kept in memory until save point B would die with the process, and resume would run
# those tools again. So the checkpoint holds:
#
# - `pendingToolUse`: `None`, or a list with one `{"id", "name", "input"}` per block, saved
#   before the first tool of the turn runs (save point A, for the whole turn);
# - when a call finishes, its entry gains `"result"` and the checkpoint is saved before the turn
#   goes on;
# - save point B appends one user message with every result and sets `pendingToolUse` back to
#   `None`.
#
# Resume reuses each entry with a result, reconciles the one running, runs those not started.
#
# The whole turn, moment by moment: what `checkpoint.json` holds, and what resume would do if
# the process were killed there.

# %%
show_turn("incident-triage", turn=1)

# %% [markdown]
# ## When the tools run at the same time
#
# A loop may run a turn's tools at once, in threads (or `asyncio.gather`); then several calls
# are in flight together and return in any order. The checkpoint keeps its shape and its
# promises: each result is saved as its tool returns, the saves one at a time under a lock (two
# at once would be two writers on one file: [the appendix](08_appendix_what_real_systems_store.ipynb)).
# A crash can catch a tool that finished before its result was saved, exactly as it can catch
# one still running: both are entries without a result, and resume reconciles both. The record
# never claims a result the tool did not return, and a result once saved stays saved.
#
# ## Check yourself

# %%
from graders.notebook import show_quiz

show_quiz("results_in_one_message")

# %% [markdown]
# ## Now change it
#
# Walk another turn (`incident-triage` has 3, `release-audit` 6). First say what
# `pendingToolUse` holds while the turn's last tool runs.

# %%
show_turn("release-audit", turn=4)

# %% [markdown]
# ## Glossary
#
# - **`tool_use` block**: one tool call inside a model response.
# - **`tool_result`**: a result sent back, naming its call by `tool_use_id`.
# - **several tool calls in one turn**: a response with two or more `tool_use` blocks.
# - **lock**: what makes concurrent saves take turns.

# %% [markdown]
# ## Key points
#
# - Every `tool_use` of a turn needs its `tool_result`, all in the next user message; the API
#   pairs them by `tool_use_id`, in any order (block order is a habit).
# - `pendingToolUse` becomes a list of the turn's calls, saved before the first tool runs; each
#   finished call's result is saved before the turn goes on; save point B writes the one result
#   message and clears the list.
# - With tools running concurrently, the saves take a lock, the record never claims a result not
#   returned, and a saved result stays saved.
#
# Next: [Level 4](../exercises/04_parallel_tool_calls.ipynb), then
# [part 6, Claude Code's checkpoints and what checkpoints cost](06_claude_code_and_what_checkpoints_cost.ipynb).
