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
# # Checkpoints · Part 1 of 7: the execution scene, and the six fields
#
# *State Management and Persistence: making long tasks survive interruption. Lesson 2 of 6:
# checkpoints, writing the execution scene to disk.* It comes as seven notebooks (parts 1 to 7)
# and an optional appendix; four exercises, Levels 1 to 4, practise it.
#
# **Time:** about 25 minutes.
# **Questions:** What does a crashed process take with it? What must a file hold so that a new
# process can carry on?
# **Objectives:** name the six fields of `checkpoint.json`; say, for each, what resume runs into
# when it is missing.
#
# Parts: 1 (then [Level 1](../exercises/01_incomplete_checkpoint.ipynb)),
# [2](02_two_save_points.ipynb), [3](03_atomic_save.ipynb) (then Level 2),
# [4](04_power_cuts.ipynb) (Level 3), [5](05_several_tool_calls_in_one_turn.ipynb) (Level 4),
# [6](06_claude_code_and_what_checkpoints_cost.ipynb),
# [7](07_knowledge_check_and_recap.ipynb), [appendix](08_appendix_what_real_systems_store.ipynb).
#
# You need the previous lesson, *Memory and execution state*, and the `stop_reason` loop. Every
# crash here is real: the course's crash harness runs a loop in a child process against a fake
# model and kills it. Before each crash, predict what it will leave and lock it in; then run the
# next cell. Run the cells from the top, on Linux or macOS (on Windows, in WSL).

# %% [markdown]
# ## The scene lives in memory
#
# *Execution state* (previous lesson) is what the harness tracks while the loop runs: the
# conversation, the turns so far, the tool call started and not yet recorded. Until something
# writes it to a file, it lives in the running process alone.
#
# Here is the `support-tickets` scenario ("Sort last quarter's support tickets by issue type and
# roll them into one table": two tool calls, then an answer), run by this lesson's own loop with
# a `save_checkpoint` that writes nothing. The harness kills it while the second tool runs.

# %%
from graders.notebook import compare, predict

predict("no_checkpoint")

# %%
from graders.notebook import (
    Harness,
    describe_run,
    ledger_lines,
    no_checkpoint,
    ran_twice,
    say,
    without,
)

with Harness(no_checkpoint()) as harness:
    in_memory_only = harness.run_point("support-tickets", "killed_during_tool_2")

print(describe_run(in_memory_only))
compare("no_checkpoint")

# %% [markdown]
# The ledger (the fake tools' record of every execution) shows the side effects are real; the
# scene that knew about them is gone.
#
# A *checkpoint* is that scene written to a file, in a form a new process can load and carry on
# from. Anthropic's account of its multi-agent research system makes the same point in its own
# terms: an agent that runs for a long time stays reliable when its flexible, model-driven steps
# are backed by fixed machinery, retries and checkpoints taken at regular points
# ([How we built our multi-agent research system](https://www.anthropic.com/engineering/multi-agent-research-system)).
# This lesson is the checkpoint half: what a checkpoint holds, when the loop saves it, and how a
# save survives a crash in the middle of it.

# %% [markdown]
# ## What to save: the six fields
#
# A checkpoint is not "everything in memory, dumped". It is exactly what resuming the loop needs:
#
# | field | what it is for |
# |---|---|
# | `version` | the protocol version: resume checks it before anything else, and refuses a version it does not know |
# | `task` | the user's task, in words: after a restart, the file is all the harness knows about what it was doing |
# | `turns` | how many turns have run: the max-turn cap counts on from it, instead of from zero |
# | `tokensUsed` | the output tokens so far, the sum of every response's `output_tokens`: a budget counter, one part of what the run costs (this course's protocol also times its compaction by it) |
# | `messages` | the whole conversation: each model call is sent this list, and it is all the model will know |
# | `pendingToolUse` | `None`, or `{id, name, input}` of a tool the model named whose result is not recorded yet |
#
# `pendingToolUse` holds one call because this loop makes one `tool_use` per turn; part 5 shows
# what changes when a turn asks for several.
#
# Here is a real checkpoint: the lesson's loop, killed while tool 2 ran, left this on disk.

# %%
from graders.notebook import show_checkpoint, variant

with Harness(variant("A and B", "temp + rename")) as harness:
    during_tool_2 = harness.run_point("support-tickets", "killed_during_tool_2")
    before_call_2 = harness.run_point("support-tickets", "killed_during_model_call_2")
    migration = harness.run_point("long-migration", "killed_during_tool_4")

checkpoint = during_tool_2.state
show_checkpoint(checkpoint, highlight=["pendingToolUse"],
                notes={"pendingToolUse": "the call that was running when the process died"})

# %% [markdown]
# Now take each field out in turn and hand the rest to a small resume routine,
# `graders.resume.resume` (the next lesson builds the real one): it runs the rest of the task
# against the same fake model and reports where it falls over. First, the complete checkpoint:

# %%
from graders.notebook import resume

resume(checkpoint)

# %% [markdown]
# For each field below, predict first, then run the cell under the prediction.
#
# ### `version`

# %%
predict("field_version")

# %%
say(resume(dict(checkpoint, version=2)).problem("version"))
say(resume(without(checkpoint, "version")).problem("version"))
compare("field_version")

# %% [markdown]
# The format will change one day (compressed messages, a list in `pendingToolUse`); a resume
# that meets a format it cannot vouch for has to stop and say so.
#
# ### `task`

# %%
predict("field_task")

# %%
say(resume(without(checkpoint, "task")).problem("task"))
compare("field_task")

# %% [markdown]
# ### `turns`
#
# The longer `long-migration` scenario makes eight tool calls. The lesson's loop was killed while
# tool 4 ran, so three turns had finished. Resume runs with a cap of five turns, once with
# `turns` and once without it.

# %%
predict("field_turns")

# %%
cap = 5
kept = resume(migration.state, scenario="long-migration", max_turns=cap)
lost = resume(without(migration.state, "turns"), scenario="long-migration", max_turns=cap)
print(f"with turns:    the cap stopped the loop after {kept.turns_run} turns had really run")
print(f"without turns: the cap stopped the loop after {lost.turns_run} turns had really run")
say(lost.problem("turns"))
compare("field_turns")

# %% [markdown]
# ### `tokensUsed`
#
# `tokensUsed` is a budget counter: a run that may spend so many tokens stops, or asks, when the
# count crosses its limit. This course's protocol keeps one simple limit of that kind, a
# threshold at which compaction (from the context-engineering course) runs. Put it just past
# what the checkpoint has already counted:

# %%
predict("field_tokens_used")

# %%
counted = migration.state["tokensUsed"]
threshold = counted + 100
kept = resume(migration.state, scenario="long-migration", compaction_threshold=threshold)
lost = resume(without(migration.state, "tokensUsed"), scenario="long-migration",
              compaction_threshold=threshold)


def when(report):
    turn = report.compaction_at_turn
    return "would never run, in this task" if turn is None else f"would run at turn {turn}"


print(f"{counted:,} output tokens counted before the crash; compaction threshold {threshold:,}")
print(f"with tokensUsed:    compaction {when(kept)}")
print(f"without tokensUsed: compaction {when(lost)}")
compare("field_tokens_used")

# %% [markdown]
# Any limit kept against the count fails the same way: a budget restarted at zero is spent twice.
# Output tokens are one part of what a run costs; the input, re-sent every turn, is usually the
# larger (part 6). Lost, the count can only be re-estimated from the messages, not exactly.
#
# Real agents rarely time compaction by this count. They judge it on the size of the context the
# next request will send: the latest response's `input_tokens` with its two cache fields, or a
# token count of `messages`. That size can be worked out again from `messages` alone, so a
# compaction judged on it survives a lost `tokensUsed`; the budget does not.
#
# ### `messages`
#
# `messages` is the largest field. This checkpoint was written after tool 1 (`list_tickets`) had
# run and its result was recorded:

# %%
predict("field_messages")

# %%
after_tool_1 = before_call_2.state
lost = resume(without(after_tool_1, "messages"))
print("The crashed run's ledger:     ", "; ".join(ledger_lines(before_call_2.ledger)))
print("What resume ran:              ", "; ".join(ledger_lines(lost.ledger)))
print("Ran twice:                    ", ", ".join(ran_twice(before_call_2.ledger, lost.ledger)))
say(lost.problem("messages"))
compare("field_messages")

# %% [markdown]
# ### `pendingToolUse`
#
# Back to the checkpoint written while `build_table` ran. Its last message names `build_table`,
# which has no result.

# %%
predict("field_pending_tool_use")

# %%
lost = resume(without(checkpoint, "pendingToolUse"))
say(lost.problem("pendingToolUse"))
say("Then:", lost.outcome, "The second: the model refused the conversation it was sent.")
compare("field_pending_tool_use")

# %% [markdown]
# Resume did not see the dangling call, so it could not reconcile it (did `build_table` finish?
# must it run again?): the next lesson reconciles against exactly this field.
#
# ## Check yourself

# %%
from graders.notebook import show_quiz

show_quiz("tokens_used_missing")

# %% [markdown]
# ## Now change it
#
# Take out other fields, or change the cap; say what resume will run into, then run.

# %%
drop = ["turns", "tokensUsed"]
report = resume(without(migration.state, *drop), scenario="long-migration", max_turns=5,
                compaction_threshold=threshold)
for name in drop:
    say(report.problem(name))

# %% [markdown]
# ## Glossary
#
# - **execution state** (the scene): the conversation, the counters, the call in flight.
# - **checkpoint**: `checkpoint.json`, that scene on disk.
# - **crash harness**: the code that runs a loop in a child process and kills it.
# - **ledger**: the fake tools' record of every execution, with its input.
# - **scenario**: a fake model's script: task, tools, results (`support-tickets`).
# - **resume**: starting the loop again from `checkpoint.json`.

# %% [markdown]
# ## Key points
#
# - Left alone, the execution scene lives only in the process: a crash takes it, and the side
#   effects of the tools it ran stay.
# - `checkpoint.json` holds six fields, each for something resume needs: `version` (refuse what
#   you do not know), `task`, `turns`, `tokensUsed` (output tokens so far), `messages` (the one
#   you cannot skip), `pendingToolUse` (the call in flight).
# - Without a field, resume does not always stop: it may carry on wrong (a cap that fires late, a
#   task begun again, a conversation the model refuses).
#
# Next: [Level 1](../exercises/01_incomplete_checkpoint.ipynb), then
# [part 2, the two save points](02_two_save_points.ipynb).
