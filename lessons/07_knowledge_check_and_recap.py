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
# # Checkpoints · Part 7 of 7: knowledge check and recap
#
# **Time:** about 15 minutes.
# **Questions:** Can you explain each idea of this lesson without looking back? Which exercise
# practises which part?
# **Objectives:** answer the source lesson's own question and seven more; find the four
# exercises and what each asks.
#
# ## Knowledge check
#
# Eight questions, the source lesson's own first. The feedback says why; try again as you like;
# the count keeps your first tries.

# %%
from graders.notebook import show_knowledge_check

show_knowledge_check()

# %% [markdown]
# No widgets here? The questions appear as text, with their ids; answer in a cell of your own:
# `check(QUIZZES["in_place_overwrite"], "your letter")`, after
# `from graders.teaching.quiz import check` and `from graders.teaching.quizzes import QUIZZES`.
#
# ## The four exercises
#
# - **Level 1, an incomplete checkpoint** (after part 1):
#   [01_incomplete_checkpoint.ipynb](../exercises/01_incomplete_checkpoint.ipynb):
#   what a partial save leaves out, where resume falls over, and the complete save.
# - **Level 2, two latent failures** (after part 3):
#   [02_two_latent_failures.ipynb](../exercises/02_two_latent_failures.ipynb): a loop
#   that gives way when killed at the wrong moment: diagnose it, then fix it.
# - **Level 3, survive a power cut** (after part 4):
#   [03_power_cut.ipynb](../exercises/03_power_cut.ipynb): predict what four saves lose,
#   then fix the first.
# - **Level 4, several tool calls in one turn** (after part 5):
#   [04_parallel_tool_calls.ipynb](../exercises/04_parallel_tool_calls.ipynb): a loop
#   for turns with several tools, its checkpoint true at every moment.
#
# `hint()` in each gives one hint at a time. (Links are for your workspace, `python3 course.py
# lab`; in the source tree the exercises are in `exercises/`.)
#
# ## References
#
# 1. Anthropic Engineering, *How we built our multi-agent research system*,
#    https://www.anthropic.com/engineering/multi-agent-research-system
# 2. Claude Code Docs, *Checkpointing*, https://code.claude.com/docs/en/checkpointing
# 3. Anthropic Engineering, *Building Effective AI Agents*,
#    https://www.anthropic.com/engineering/building-effective-agents
# 4. T. S. Pillai et al., *All File Systems Are Not Created Equal*, OSDI 2014 (part 4).
#
# ## Now change it
#
# Test an answer on a real crash: pick a loop and a crash point, predict, then run.

# %%
from graders.notebook import Harness, describe_run, resume, say, variant

save_points, write_mode, point = "B only", "in place", "killed_during_tool_1"
with Harness(variant(save_points, write_mode)) as harness:
    seen = harness.run_point("support-tickets", point)
print(describe_run(seen))
say("Resume:", resume(seen.checkpoint).outcome)

# %% [markdown]
# ## Glossary
#
# - **checkpoint**: the running state on disk, `checkpoint.json`.
# - **save point A**, **save point B**: before a named tool runs; after its result is recorded.
# - **atomic save**: a temp file, then `os.replace`; **torn write**: a save cut off part-way.
# - **power cut**: loses what had not reached the disk; **fsync**: waits until it has.
# - **crash point**: where a run is killed; **resume**: the loop restarted from the file.

# %% [markdown]
# ## Key points
#
# - The execution scene dies with its process; the tools' side effects stay. A checkpoint puts
#   the scene on disk, so a long task picks up where it broke
#   ([How we built our multi-agent research system](https://www.anthropic.com/engineering/multi-agent-research-system)).
# - Six fields: `version` (refuse the unknown), `task`, `turns` (the cap counts from it),
#   `tokensUsed` (output tokens so far: re-estimable, not recoverable), `messages` (the one you
#   cannot skip), `pendingToolUse` (the call in flight).
# - Two saves per turn: save point A before the named tool runs, save point B once its result is
#   recorded. B alone loses the call in flight; A alone reruns a finished call.
# - Not in place: an atomic save writes a temp file in the same folder, then `os.replace`s it.
# - Beyond the source: against a power cut, flush and fsync the temp file before the rename, and
#   the folder after it (macOS: `F_FULLFSYNC`).
# - Beyond the source: several tools in one turn make `pendingToolUse` a list, each result saved
#   as it returns, all results in one user message, in any order.
# - Claude Code checkpoints per prompt, to rewind
#   ([Checkpointing](https://code.claude.com/docs/en/checkpointing)); checkpoints cost, so add
#   them where they demonstrably help
#   ([Building Effective AI Agents](https://www.anthropic.com/engineering/building-effective-agents)).
#
# Next in the course: *Resuming from a checkpoint*. Optional first:
# [the appendix](08_appendix_what_real_systems_store.ipynb).
