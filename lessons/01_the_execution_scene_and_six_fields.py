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
# # Checkpoints · Part 1 of 6: the execution scene, and the six fields
#
# *State Management and Persistence: making long tasks survive interruption. Lesson 2 of 6:
# checkpoints, writing the execution scene to disk.* This lesson comes as six notebooks, parts 1
# to 6, and two exercises; the course's other lessons are named by their titles.
#
# By the end of these six parts you can:
#
# 1. name the six fields of `checkpoint.json` and say, for each, what resume runs into when it is
#    missing (this part);
# 2. tell the two save points of a loop turn apart, and explain what a loop that saves at just
#    one of them leaves you exposed to ([part 2](02_two_save_points.ipynb));
# 3. write a `save_checkpoint` that cannot destroy the checkpoint it replaces: a temp file, then
#    an atomic rename ([part 3](03_atomic_save.ipynb)).
#
# Then come [going deeper](04_going_deeper.ipynb) (beyond the source lesson),
# [Claude Code's checkpoints and what checkpoints cost](05_claude_code_and_what_checkpoints_cost.ipynb),
# and [the knowledge check and recap](06_knowledge_check_and_recap.ipynb).
#
# You need the course's previous lesson, *Memory and execution state*, and the `stop_reason`
# loop. Every crash in these notebooks is real: the course's crash harness runs a loop in a child
# process against a deterministic fake model and kills it, and what you see is what it found on
# disk. Before each crash you are asked to predict what it will leave: pick an answer and lock it
# in, then run the next cell and compare. Run the cells from the top. (The harness kills and
# tears runs with POSIX tools: Linux or macOS. On Windows the harness says so and the crash cells
# cannot run: use WSL or a Linux container.)

# %% [markdown]
# ## The scene lives in memory
#
# The previous lesson told *memory* (what you hand the model) apart from *execution state*: what
# the harness itself keeps track of while the loop runs, such as the conversation so far, how
# many turns have gone by, and which tool call has been started without its result being written
# down yet. Until something writes it to a file, all of that is held in the running process and
# nowhere else.
#
# Here is the `support-tickets` scenario ("Sort last quarter's support tickets by issue type and
# roll them into one table": two tool calls, then an answer), run by this lesson's own loop
# with one change: its `save_checkpoint` writes nothing. The harness will kill the process while
# the second tool runs.

# %%
from graders.teaching.predict import compare, predict

predict("no_checkpoint")

# %%
from graders.harness import Harness
from graders.teaching.scene import describe_run, ledger_lines, ran_twice, without
from graders.teaching.variants import no_checkpoint

with Harness(no_checkpoint()) as harness:
    in_memory_only = harness.run_point("support-tickets", "killed_during_tool_2")

print(describe_run(in_memory_only))
compare("no_checkpoint")

# %% [markdown]
# Nothing is on disk, yet the ledger (the fake tools' record of every execution) shows that
# `list_tickets` ran, and `build_table` was running when the process died. Those side effects
# are real; the scene that knew about them is gone.
#
# A *checkpoint* is that scene written to a file, in a form a new process can load and carry on
# from. Anthropic's account of its multi-agent research system puts it this way:
# long-running agents stay reliable by combining "the adaptability of AI agents built on Claude
# with deterministic safeguards like retry logic and regular checkpoints"
# ([How we built our multi-agent research system](https://www.anthropic.com/engineering/multi-agent-research-system)).
# These six parts are about the checkpoint half of that: which fields a checkpoint holds, at
# which moments the loop saves it, and how a save is written so that a crash during it does no
# harm.

# %% [markdown]
# ## What to save: the six fields
#
# A checkpoint is not "everything in memory, dumped". It is exactly what resuming the loop needs.
# Every later part uses the same six fields:
#
# | field | what it is for |
# |---|---|
# | `version` | the protocol version: resume checks it before anything else, and refuses a version it does not know |
# | `task` | the user's task, in words: after a restart, the file is all the harness knows about what it was doing |
# | `turns` | how many turns have run: the max-turn cap counts on from it, instead of from zero |
# | `tokensUsed` | the running spend, the sum of every response's `output_tokens`: a budget, and in this course's protocol the compaction threshold, are judged against it |
# | `messages` | the whole conversation: each model call is sent this list, and it is all the model will know |
# | `pendingToolUse` | `None`, or `{id, name, input}` of a tool the model named whose result is not recorded yet |
#
# `pendingToolUse` holds one call because this course's loop makes one `tool_use` per turn; a turn
# with several tool calls would make it a list, with the same reasoning.
#
# Here is a real checkpoint: the lesson's loop, killed while tool 2 ran, left this on disk.

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
# Now take each field out in turn and hand what is left to a small resume routine,
# `graders.resume.resume` (the course's next lesson, *Resuming from a checkpoint*, builds the
# real one). It reads the checkpoint, runs the rest of the task against the same fake model and
# tools, and reports every step and every place it falls over. First, the complete checkpoint:

# %%
from graders.resume import resume

resume(checkpoint)

# %% [markdown]
# For each field below, predict first, then run the cell under the prediction.
#
# ### `version`

# %%
predict("field_version")

# %%
newer = dict(checkpoint, version=2)
print(resume(newer).to_text())
print()
print(resume(without(checkpoint, "version")).to_text())
compare("field_version")

# %% [markdown]
# The format will change one day (compressed messages, a list in `pendingToolUse`). A resume that
# meets a format it cannot vouch for has to stop and say so; reading on would mean guessing.
#
# ### `task`

# %%
predict("field_task")

# %%
print(resume(without(checkpoint, "task")).problem("task"))
compare("field_task")

# %% [markdown]
# The restarted harness remembers nothing; the file is all it has.
#
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
print(lost.problem("turns"))
compare("field_turns")

# %% [markdown]
# Counting restarts at zero, so the cap of five lets five *more* turns run: it fires three turns
# late, here not at all before the task ends. (A count rebuilt some other way can be off in the
# other direction: counted from the assistant messages, a turn whose tool result was never
# recorded would count too, and the cap would fire early. Either way the stopping condition no
# longer matches what ran.)
#
# ### `tokensUsed`
#
# In this course's protocol, compaction (from the context-engineering course) runs when the
# running token total crosses a threshold. Put the threshold just past what the checkpoint has
# already spent:

# %%
predict("field_tokens_used")

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
compare("field_tokens_used")

# %% [markdown]
# Counted from zero, the total leaves out everything spent before the crash, and it cannot be
# rebuilt: it is the sum of the usage figures of every past response, and those died with the
# process. A note on practice: `tokensUsed` adds up `output_tokens`, what the run has *spent*.
# Real harnesses usually judge compaction on the *size of the context* instead: the latest
# response's `input_tokens` plus its cache fields (`cache_creation_input_tokens`,
# `cache_read_input_tokens`). That size can be recounted from `messages` after a restart; the
# running spend cannot, which is why it has to be saved.
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
print(lost.problem("messages"))
compare("field_messages")

# %% [markdown]
# With no conversation to hand the model, resume can only give it the task. What you resumed is
# not "carry on" but the same task begun afresh, on top of every side effect the first run left.
#
# ### `pendingToolUse`
#
# Back to the checkpoint written while `build_table` ran. Its last message names `build_table`,
# which has no result.

# %%
predict("field_pending_tool_use")

# %%
print(resume(without(checkpoint, "pendingToolUse")).to_text())
compare("field_pending_tool_use")

# %% [markdown]
# Resume did not see the dangling call, so it could not reconcile it (did `build_table` finish?
# must it run again?); it went straight to the model, which refused a conversation whose last
# tool call has no result, as the real Messages API does. The course's next lesson, *Resuming
# from a checkpoint*, reconciles against exactly this field.
#
# ## Check yourself

# %%
from graders.teaching.widgets import show_quiz

show_quiz("tokens_used_missing")

# %% [markdown]
# Next: [part 2, the two save points](02_two_save_points.ipynb): *when* in the loop the
# checkpoint is written, and the crash timeline.
