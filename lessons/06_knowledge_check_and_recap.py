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
# # Checkpoints · Part 6 of 6: knowledge check and recap
#
# ## Knowledge check
#
# Seven questions; the first is the source lesson's own. Pick an answer: the feedback says why it
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
print(check(QUIZZES[SOURCE_QUESTION], "a"))

# %% [markdown]
# ## Recap
#
# - Left alone, the execution scene is held only by the running process and goes when it goes;
#   the side effects of the tools it ran stay. A checkpoint is that scene on disk, so a long task
#   picks up where it broke instead of starting over
#   ([How we built our multi-agent research system](https://www.anthropic.com/engineering/multi-agent-research-system)).
# - `checkpoint.json` holds six fields: `version` (refuse what you do not know), `task` (which
#   task this is), `turns` (where the max-turn cap counts from), `tokensUsed` (the running spend,
#   which cannot be recounted after a crash), `messages` (everything the model will be sent; the
#   largest field and the one you cannot skip), and `pendingToolUse` (the call in flight, which
#   the course's next lesson reconciles against).
# - Each loop turn saves twice: at A, once the model has named a tool and before it runs; at B,
#   once the result is recorded. Saving at B alone leaves a call in flight with no trace on disk;
#   saving at A alone leaves a finished call looking unfinished, so it runs again.
# - Writing `checkpoint.json` in place is not safe: a kill part-way through leaves the one copy of
#   the scene torn. Write a temp file in the same directory and `os.replace` it over the
#   checkpoint: on POSIX, any program that opens the file sees one complete save, old or new.
# - Beyond the source: what programs see is not what survives a power cut. For that, fsync the
#   temp file before the rename and the directory after it (on macOS, `F_FULLFSYNC`); unique temp
#   names keep two writers from mixing their bytes.
# - Claude Code checkpoints before each user prompt, for rewinding a session with a person in it
#   ([Checkpointing](https://code.claude.com/docs/en/checkpointing)); this lesson's saves are for
#   unattended tasks. Different cuts for different purposes, and the same question behind both:
#   which state do we return to?
# - Checkpoints cost time and bytes, and the bytes of rewrite-everything saves grow with the
#   square of the turns. Add them where they demonstrably improve outcomes
#   ([Building Effective AI Agents](https://www.anthropic.com/engineering/building-effective-agents)).
#
# ## Exercises
#
# - **Level 1, an incomplete checkpoint**:
#   [01_incomplete_checkpoint.ipynb](../exercises/lesson2/01_incomplete_checkpoint.ipynb). A
#   `save_checkpoint` that keeps only part of the state: name what it leaves out, say where
#   resume falls over without each, and complete the save.
# - **Level 2, two latent failures**:
#   [02_two_latent_failures.ipynb](../exercises/lesson2/02_two_latent_failures.ipynb). A
#   colleague's agent loop you have not seen yet: it works until it is killed at the wrong moment.
#   Find where it gives way and fix it; the grader checks your fix by killing it at every crash
#   point. Stuck? `hint()` in the notebook gives one hint at a time.
#
# (The links are for your workspace, opened with `python3 course.py lab`. In the course's source
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
# Next, in the course: the next lesson, *Resuming from a checkpoint*: restarting the loop from
# `checkpoint.json`, and reconciling `pendingToolUse`.
