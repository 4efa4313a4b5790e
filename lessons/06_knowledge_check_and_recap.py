# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Lesson 2 · Part 6: knowledge check and recap
#
# ## Knowledge check
#
# Six questions; the first is the source lesson's own. Pick an answer: the feedback says why it
# is right or wrong, and you may try again. The count at the bottom keeps your first tries.

# %%
from graders.teaching.widgets import show_knowledge_check

show_knowledge_check()

# %% [markdown]
# No widgets where you are reading this? The questions then appear as text, with the answers
# after them. You can also answer in code, one question at a time:

# %%
from graders.teaching.quiz import check
from graders.teaching.quizzes import QUIZZES, SOURCE_QUESTION

print(QUIZZES[SOURCE_QUESTION])
print()
print(check(QUIZZES[SOURCE_QUESTION], "c"))

# %% [markdown]
# ## Recap
#
# - By default the execution scene lives in the process's memory and dies with it; the side
#   effects of the tools it ran do not. A checkpoint is that scene on disk, so a long task picks
#   up where it broke instead of starting over
#   ([How we built our multi-agent research system](https://www.anthropic.com/engineering/multi-agent-research-system)).
# - `checkpoint.json` holds six fields: `version` (refuse what you do not know), `task` (which
#   task this is), `turns` (where the max-turn cap counts from), `tokensUsed` (what compaction is
#   judged against), `messages` (everything the model knows; the largest field and the one you
#   cannot skip), and `pendingToolUse` (the call in flight, which Lesson 3 reconciles against).
# - A loop turn has two save points: A after the model names a tool and before it runs, B after
#   its result is recorded. Saving only at B leaves a call in flight with no trace on disk.
# - Overwriting `checkpoint.json` in place is not safe: a crash mid-write turns the only copy of
#   the scene into torn JSON. Write a temp file in the same directory and `os.replace` it over
#   the checkpoint: at every instant the file on disk is one complete save.
# - Beyond the source: temp + rename survives a killed process, not a power cut, unless the temp
#   file is fsynced before the rename and the directory after it; unique temp names keep two
#   writers from mixing their bytes.
# - Claude Code checkpoints before each user prompt, for rewinding a session with a person in it
#   ([Checkpointing](https://code.claude.com/docs/en/checkpointing)); this lesson's saves are for
#   unattended tasks. Different cuts, the same question: where do we go back to?
# - Checkpoints cost time and bytes, and the bytes of rewrite-everything saves grow with the
#   square of the turns. Add them where they demonstrably improve outcomes
#   ([Building Effective AI Agents](https://www.anthropic.com/engineering/building-effective-agents)).
#
# ## Exercises
#
# - **Level 1, an incomplete checkpoint**:
#   [01_incomplete_checkpoint.ipynb](../exercises/lesson2/01_incomplete_checkpoint.ipynb). A
#   `save_checkpoint` that keeps only `messages`: name the five missing fields, say where resume
#   falls over for each, and complete the save.
# - **Level 2, two latent failures**:
#   [02_two_latent_failures.ipynb](../exercises/lesson2/02_two_latent_failures.ipynb). The
#   starter you met in the crash timeline: find the two places it gives way under a crash and fix
#   both. The grader checks your fix by killing it at every crash point.
#
# (The links are for your workspace, opened with `checkpoint-lab lab`. In the course's source
# tree the exercises are `exercises/01_incomplete_checkpoint.ipynb` and
# `exercises/02_two_latent_failures.ipynb`.)
#
# ## References
#
# 1. Anthropic Engineering, *How we built our multi-agent research system*,
#    https://www.anthropic.com/engineering/multi-agent-research-system
# 2. Claude Code Docs, *Checkpointing*, https://code.claude.com/docs/en/checkpointing
# 3. Anthropic Engineering, *Building Effective AI Agents*,
#    https://www.anthropic.com/engineering/building-effective-agents
#
# Next: Lesson 3, resuming from a checkpoint: restarting the loop, and reconciling
# `pendingToolUse`.
