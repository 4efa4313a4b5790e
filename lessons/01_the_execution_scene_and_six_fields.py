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
# # Lesson 2 · Part 1: the execution scene, and the six fields
#
# *State Management and Persistence: making long tasks survive interruption. Lesson 2 of 6:
# checkpoints, writing the execution scene to disk.*
#
# By the end of this lesson you can:
#
# 1. name the six fields of `checkpoint.json` and say, for each, what resume runs into when it is
#    missing (this part);
# 2. tell the two save points of a loop turn apart, and say what saving at only one of them sets
#    you up for ([part 2](02_two_save_points.ipynb));
# 3. write a `save_checkpoint` that cannot destroy the checkpoint it replaces: a temp file, then
#    an atomic rename ([part 3](03_atomic_save.ipynb)).
#
# Then come [going deeper](04_going_deeper.ipynb) (beyond the source lesson),
# [Claude Code's checkpoints and what checkpoints cost](05_claude_code_and_what_checkpoints_cost.ipynb),
# and [the knowledge check and recap](06_knowledge_check_and_recap.ipynb).
#
# You need Lesson 1 (memory versus execution state) and the `stop_reason` loop. Every crash in
# these notebooks is real: the course's crash harness runs a loop in a child process against a
# deterministic fake model and kills it, and what you see is what it found on disk. Run the
# cells from the top. (The harness kills and tears runs with POSIX tools: Linux or macOS. On
# Windows the harness says so and the crash cells cannot run: use WSL or a Linux container.)

# %% [markdown]
# ## The scene lives in memory
#
# Lesson 1 separated *memory* (what you hand the model) from *execution state*: the scene the
# harness itself holds while the loop runs: the `messages` list, the turn counter, the tool call
# whose result is not recorded yet. Unless you write it somewhere, that scene exists only in the
# process's memory.
#
# Here is the `support-tickets` scenario ("Sort last quarter's support tickets by issue type and
# roll them into one table": two tool calls, then an answer), run by the course's reference loop
# with one change: its `save_checkpoint` writes nothing. The harness kills the process while the
# second tool runs.

# %%
from graders.harness import Harness
from graders.teaching.scene import describe_run, ledger_lines, ran_twice, without
from graders.teaching.variants import no_checkpoint

with Harness(no_checkpoint()) as harness:
    in_memory_only = harness.run_point("support-tickets", "killed_during_tool_2")

print(describe_run(in_memory_only))

# %% [markdown]
# Nothing is on disk, yet the ledger (the fake tools' record of every execution) shows that
# `list_tickets` ran, and `build_table` was running when the process died. Those side effects
# are real; the scene that knew about them is gone. A restarted process can only begin the task
# again from zero.
#
# Writing that scene to disk, so that a restarted process can read it back, is what a
# *checkpoint* is. Anthropic's account of its multi-agent research system puts it this way:
# long-running agents stay reliable by combining "the adaptability of AI agents built on Claude
# with deterministic safeguards like retry logic and regular checkpoints"
# ([How we built our multi-agent research system](https://www.anthropic.com/engineering/multi-agent-research-system)).
# This lesson is about the checkpoint half: what goes in one, where in the loop to write it, and
# how to write it without making things worse than having none.

# %% [markdown]
# ## What to save: the six fields
#
# A checkpoint is not "everything in memory, dumped". It is exactly what resuming the loop needs.
# Every later lesson uses the same six fields:
#
# | field | what it is for |
# |---|---|
# | `version` | the protocol version: resume checks it before anything else, and refuses a version it does not know |
# | `task` | the user's task, in words: after a restart, the file is all the harness knows about what it was doing |
# | `turns` | how many turns have run: the max-turn cap counts on from it, instead of from zero |
# | `tokensUsed` | the running token total: the compaction threshold fires off it |
# | `messages` | the whole conversation: the model has no memory of its own, this list is everything it knows |
# | `pendingToolUse` | `None`, or `{id, name, input}` of a tool the model named whose result is not recorded yet |
#
# `pendingToolUse` holds one call because this course's loop makes one `tool_use` per turn; a turn
# with several tool calls would make it a list, with the same reasoning.
#
# Here is a real checkpoint: the reference loop, killed while tool 2 ran, left this on disk.

# %%
from graders.teaching.checkpoint_view import show_checkpoint
from graders.teaching.variants import variant

with Harness(variant("A and B", "temp + rename")) as harness:
    during_tool_2 = harness.run_point("support-tickets", "killed_during_tool_2")
    before_call_2 = harness.run_point("support-tickets", "killed_during_model_call_2")
    migration = harness.run_point("long-migration", "killed_during_tool_4")

checkpoint = during_tool_2.state
show_checkpoint(checkpoint, highlight=["pendingToolUse"],
                notes={"pendingToolUse": "the call that was running when the process died"})

# %% [markdown]
# Now take each field out in turn and hand what is left to a small reference resume routine,
# `graders.resume.resume` (Lesson 3 treats resume fully). It reads the checkpoint, runs the rest
# of the task against the same fake model and tools, and reports every step and every place it
# falls over. First, the complete checkpoint:

# %%
from graders.resume import resume

resume(checkpoint)

# %% [markdown]
# ### `version`: refuse what you do not know
#
# The format will change one day (compressed messages, a list in `pendingToolUse`). A resume that
# meets a version it does not know must stop and say so, not parse ahead and misread the file.

# %%
newer = dict(checkpoint, version=2)
print(resume(newer).to_text())
print()
print(resume(without(checkpoint, "version")).to_text())

# %% [markdown]
# ### `task`: nobody can say what is being resumed
#
# The restarted harness remembers nothing; the file is all it has. Without `task` it cannot say
# which task this checkpoint belongs to, nor tell anyone which task it is resuming.

# %%
resume(without(checkpoint, "task")).problem("task")

# %% [markdown]
# ### `turns`: the max-turn cap fires late
#
# The longer `long-migration` scenario makes eight tool calls. The reference loop was killed while
# tool 4 ran, so three turns had finished. Resume with a cap of five turns, once with `turns` and
# once without it:

# %%
cap = 5
kept = resume(migration.state, scenario="long-migration", max_turns=cap)
lost = resume(without(migration.state, "turns"), scenario="long-migration", max_turns=cap)
print(f"with turns:    the cap stopped the loop after {kept.turns_run} turns had really run")
print(f"without turns: the cap stopped the loop after {lost.turns_run} turns had really run")
lost.problem("turns")

# %% [markdown]
# Counting restarts at zero, so the cap of five lets five *more* turns run: it fires three turns
# late. (A cap that counts down from a budget would fire early instead; either way the stopping
# condition no longer matches what ran.)
#
# ### `tokensUsed`: compaction is misjudged
#
# Compaction (from the context-engineering course) runs when the running token total crosses a
# threshold. Put the threshold just past what the checkpoint has already spent:

# %%
spent = migration.state["tokensUsed"]
threshold = spent + 100
kept = resume(migration.state, scenario="long-migration", compaction_threshold=threshold)
lost = resume(without(migration.state, "tokensUsed"), scenario="long-migration",
              compaction_threshold=threshold)
print(f"{spent:,} tokens were spent before the crash; compaction threshold {threshold:,}")
print(f"with tokensUsed:    compaction would run at turn {kept.compaction_at_turn}")
print(f"without tokensUsed: compaction would run at turn {lost.compaction_at_turn}"
      "  (None: never, in this task)")

# %% [markdown]
# Counted from zero, the total leaves out everything spent before the crash. Re-estimating it
# would need the usage figures of every past response, which in most setups are gone.
#
# ### `messages`: the model starts from nothing, the side effects stay
#
# `messages` is the largest field and the one you cannot skip. This checkpoint was written after
# tool 1 (`list_tickets`) had run and its result was recorded:

# %%
after_tool_1 = before_call_2.state
lost = resume(without(after_tool_1, "messages"))
print("The crashed run's ledger:     ", "; ".join(ledger_lines(before_call_2.ledger)))
print("What resume ran:              ", "; ".join(ledger_lines(lost.ledger)))
print("Ran twice:                    ", ", ".join(ran_twice(before_call_2.ledger, lost.ledger)))
lost.problem("messages")

# %% [markdown]
# With no conversation to hand the model, resume can only give it the task. The model starts
# over and asks for `list_tickets` again: what you resumed is not "carry on" but a new task from
# zero, on top of every side effect the first run left.
#
# ### `pendingToolUse`: a dangling call goes unseen
#
# Back to the checkpoint written while `build_table` ran. Its last message names `build_table`,
# which has no result. Without `pendingToolUse`, resume does not know a call was in flight:

# %%
print(resume(without(checkpoint, "pendingToolUse")).to_text())

# %% [markdown]
# Resume did not see the dangling call, so it could not reconcile it (did `build_table` finish?
# must it run again?); it went straight to the model, which refused a conversation whose last
# tool call has no result, as the real Messages API does. Lesson 3 reconciles against exactly this
# field.
#
# ## Check yourself

# %%
from graders.teaching.widgets import show_quiz

show_quiz("tokens_used_missing")

# %% [markdown]
# Next: [part 2, the two save points](02_two_save_points.ipynb): *when* in the loop the
# checkpoint is written, and the crash timeline.
