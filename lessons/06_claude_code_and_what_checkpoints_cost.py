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
# # Checkpoints · Part 6 of 7: Claude Code's checkpoints, and what checkpoints cost
#
# **Time:** about 20 minutes.
# **Questions:** How often should a checkpoint be written? What do two saves per turn cost, and
# when is that worth it?
# **Objectives:** contrast Claude Code's per-prompt checkpoints with two saves per loop turn;
# read a measurement of what durable saves cost on your machine, and say when they pay off.
#
# ## A checkpoint per user prompt
#
# Claude Code uses the word "checkpoint" too. Its documentation
# ([Checkpointing, Claude Code Docs](https://code.claude.com/docs/en/checkpointing)) describes
# them this way: before each prompt a person sends, Claude Code records the state of the code on
# its own, so each prompt gets one checkpoint; and the checkpoints are stored along with the
# conversation, so `/rewind` still works in a session that was resumed. The same page lists
# what they leave out: files changed by bash commands are not tracked, only edits made through
# Claude Code's own file-editing tools.
#
# Those checkpoints do another job. In a Claude Code session a person at the keyboard may want
# the files back as they were before some request, so a checkpoint is cut where the person
# speaks, and used to rewind. Nobody watches this lesson's loop: the unit is its turn, cut twice
# more (A and B), because the dangerous moment is inside it.
#
# | | Claude Code | this lesson's loop |
# |---|---|---|
# | who is there | a person, in the loop | nobody: an unattended task |
# | when it saves | before each user prompt | twice per loop turn (A and B) |
# | what it is for | rewinding a session (`/rewind`) | resuming after a crash |
# | what plays `pendingToolUse` | nothing: prompts are the unit | `pendingToolUse`, written at A |
#
# Where to cut, and how often, follows from what the checkpoint is for; both answer one
# question: if this goes wrong, which state do we return to?

# %%
from graders.notebook import show_quiz

show_quiz("claude_code_unit")

# %% [markdown]
# ## Checkpoints aren't free
#
# Every loop turn writes the whole state twice: for a short task that ends normally, pure
# overhead. Anthropic's advice in
# [Building Effective AI Agents](https://www.anthropic.com/engineering/building-effective-agents)
# applies: add a piece of machinery only once you can show it makes the results better. So
# measure it.
#
# The `large-results` scenario reads a day of web logs per tool call, tens of kB each. The
# measurement builds a correct loop's state turn by turn and times [part 4](04_power_cuts.ipynb)'s
# durable save (temp file, its fsync, rename, the folder's fsync) at both save points, for 16
# turns, in a folder beside this notebook: on your workspace's disk, which it names (on a RAM
# filesystem, tmpfs, an fsync is free and flatters the saves). About a second.

# %%
import tempfile

from graders.notebook import (
    TOOL_LATENCY,
    filesystem_of,
    measure_save_cost,
    read_cost,
    say,
    show_save_cost,
)

with tempfile.TemporaryDirectory(dir=".", prefix=".checkpoint-cost-") as folder:
    measurement = measure_save_cost(turns=16, directory=folder)
    disk = filesystem_of(folder)
say(disk.describe())
show_save_cost(measurement, tool_latency=TOOL_LATENCY)

# %%
say(read_cost(measurement, tool_latency=TOOL_LATENCY))

# %% [markdown]
# ## Reading the plot
#
# - **Left, time per save** (log scale): both save points cost about the same, and climb as the
#   state grows. The dashed line is one tool call, assumed 300 ms: far below it, the saves are a
#   small tax on each turn.
# - **Right, bytes**: each save rewrites the whole history, so bytes per save grow in a straight
#   line and the total (red) with the *square* of the turns (the dotted c x turns²).
#
# It pays off when a crash is expensive: a long task, tools that cost money or change the world,
# a model bill for every turn redone (mostly input tokens: each request re-sends the whole
# conversation, billed as `input_tokens` and the cache fields, far more than the `output_tokens`
# that `tokensUsed` counts). Not for a few turns done in seconds. On very long tasks the square
# catches up: real systems then *append* to a log
# ([the appendix](08_appendix_what_real_systems_store.ipynb)), and compaction keeps the state
# small.
#
# ## Now change it
#
# Put in your own tool latency (5 ms?) or more turns; say first where saves stop being cheap.

# %%
with tempfile.TemporaryDirectory(dir=".", prefix=".checkpoint-cost-") as folder:
    longer = measure_save_cost(turns=24, directory=folder)
say(read_cost(longer, tool_latency=0.005))

# %% [markdown]
# ## Glossary
#
# - **`/rewind`**: Claude Code's command back to a checkpoint.
# - **tool latency**: how long one tool call takes: the yardstick.
# - **input tokens**: what a request is billed for sending (the conversation).

# %% [markdown]
# ## Key points
#
# - Claude Code checkpoints per user prompt, to rewind a person's session; this lesson saves twice
#   per turn, to resume an unattended task. Purpose sets the cut.
# - Each save rewrites the whole state: bytes written grow with the square of the turns.
# - Checkpoint where it demonstrably helps: long tasks, side-effecting tools; not seconds-long
#   tasks.
#
# Next: [part 7, the knowledge check and recap](07_knowledge_check_and_recap.ipynb).
