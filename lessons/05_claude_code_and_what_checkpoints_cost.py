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
# # Checkpoints · Part 5 of 6: Claude Code's checkpoints, and what checkpoints cost
#
# Two saves per loop turn is one answer to "how often should a checkpoint be written?". This
# part puts it next to a real product's answer, then measures what it costs.
#
# ## A checkpoint per user prompt
#
# Claude Code uses the word "checkpoint" too. Its documentation
# ([Checkpointing, Claude Code Docs](https://code.claude.com/docs/en/checkpointing)) says that
# "checkpointing automatically captures the state of your code before each user prompt", that
# "every user prompt creates a new checkpoint", and that "Claude Code saves checkpoints with the
# conversation, so you can still run /rewind after you resume a session". The same page lists
# what they leave out: files changed by bash commands are not tracked, only edits made through
# Claude Code's own file-editing tools.
#
# Those checkpoints are for a different job. In a Claude Code session a person sits at the
# keyboard: they try an approach, look at the result, and may want the files back as they were
# before some earlier request. So a checkpoint is cut where the person speaks, and it is used to
# rewind. The loop in this lesson has nobody watching it. No one notices a crash or decides
# what to do next; the thing that repeats is the loop's own turn. A turn is cut twice more, at
# save points A and B, because the dangerous moment is inside it: after the model has asked for
# a tool and before the answer is written down.
#
# | | Claude Code | this lesson's loop |
# |---|---|---|
# | who is there | a person, in the loop | nobody: an unattended task |
# | when it saves | before each user prompt | twice per loop turn (A and B) |
# | what it is for | rewinding a session (`/rewind`) | resuming after a crash |
# | what plays `pendingToolUse` | nothing: prompts are the unit | `pendingToolUse`, written at A |
#
# Neither cut is right everywhere. Where to place checkpoints, and how many, follows from their
# purpose; both designs answer the same practical question: if this goes wrong, which state do
# we return to?

# %%
from graders.teaching.widgets import show_quiz

show_quiz("claude_code_unit")

# %% [markdown]
# ## Checkpoints aren't free
#
# Under this lesson's protocol, every loop turn writes the whole state to disk twice. For a
# three-to-five-turn task that finishes normally, that is pure overhead: the files are never
# read. Anthropic's advice in
# [Building Effective AI Agents](https://www.anthropic.com/engineering/building-effective-agents)
# applies: "you should consider adding complexity only when it demonstrably improves outcomes."
# So measure it, on your own machine.
#
# The `large-results` scenario reads a day of web-server access logs per tool call, tens of kB
# each. The measurement builds the state a correct loop holds on it, turn by turn, and times an
# atomic save with an fsync (temp file, fsync, rename) at both save points of every turn. The
# scenario has seven tool calls; the measurement goes on past them with the same seven results
# again, as a task that reads as much each turn would, up to 16 turns. Expect about a second.
#
# It measures in a temporary folder beside this notebook, so on the disk that holds your
# workspace, and says which filesystem that is: on a RAM filesystem (tmpfs) an fsync costs
# nothing, and the numbers would flatter the saves.

# %%
import tempfile

from IPython.display import Image

from graders.teaching.cost import (
    TOOL_LATENCY,
    figure_png,
    measure_save_cost,
    plot_save_cost,
    read_cost,
)
from graders.teaching.filesystem import filesystem_of

with tempfile.TemporaryDirectory(dir=".", prefix=".checkpoint-cost-") as folder:
    measurement = measure_save_cost(turns=16, directory=folder)
    disk = filesystem_of(folder)
print(disk.describe())
Image(figure_png(plot_save_cost(measurement, tool_latency=TOOL_LATENCY)))

# %%
print(read_cost(measurement, tool_latency=TOOL_LATENCY))

# %% [markdown]
# ## Reading the plot
#
# - **Left, time per save** (log scale). Both save points cost about the same: each rewrites the
#   whole state. The time climbs with the turn, because the state grows by one day of logs per
#   turn. The dashed line is one tool call, taken as 300 ms (an assumption: fetching a day's log
#   from a server; put in your own tool's latency with `tool_latency=`). As long as the two saves
#   of a turn stay far below that line, the checkpoint is a small tax on each turn.
# - **Right, bytes.** Each save writes the whole history, so the bytes per save (squares) grow in
#   a straight line with the turns, and the bytes written in total (red) grow with the *square*
#   of the turns: the dotted curve, c x turns², lies on top of it. Twice the turns, about four
#   times the bytes, as the printed numbers show.
#
# When does it pay off? When a crash is expensive: a long task, tool calls that cost money or
# change the world, a model bill for every turn redone. A few milliseconds per turn buys not
# redoing minutes of work, and not running a side-effecting tool twice. When does it not? A task
# of a few turns that finishes in seconds: starting over is cheaper than the code and the disk
# writes. And on a very long task the square catches up: at hundreds of turns of large results,
# each save rewrites megabytes. That is where real systems *append* each turn's new messages to
# a log (Temporal's event history, LevelDB's write-ahead log) instead of
# rewriting everything, and compaction (the context-engineering course) keeps the state small.
#
# Next: [part 6, the knowledge check and recap](06_knowledge_check_and_recap.ipynb).
