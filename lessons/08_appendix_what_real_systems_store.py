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
# # Checkpoints · Appendix (optional): unique temp names, and what real systems store
#
# **Time:** about 15 minutes; no exercise depends on it.
# **Questions:** What goes wrong when two writers share one temp name? How do production systems
# record "this step started and its result is not recorded"?
# **Objectives:** say why a save takes a fresh temp name (and what that does not fix); map the
# six fields onto a few real systems, and name what they add.
#
# *Beyond the source lesson.*
#
# ## Unique temp names
#
# The source lesson's save writes `checkpoint.json.tmp`, one fixed name. Two writers saving at
# once (two threads, or a restarted process while the old one lives) share that file. Two real
# saves, interleaved step by step, with the fixed name, then with `tempfile.mkstemp`:

# %%
from graders.teaching.predict import compare, predict

predict("two_writers_fixed_name")

# %%
import tempfile

from graders.teaching.deeper import two_writers
from graders.teaching.scene import say

with tempfile.TemporaryDirectory() as folder:
    say(two_writers(folder, unique_names=False).to_text())
    print()
    say(two_writers(folder, unique_names=True).to_text())
compare("two_writers_fixed_name")

# %% [markdown]
# B's `open(..., "w")` emptied the file A was writing; A went on at its old offset, and A's
# rename put the mixture in place. It parses only because the demonstration pads both states
# inside one string; real saves usually splice into torn JSON, and now and then into a file that
# parses but is neither save. Unique names keep each save whole, but the later rename still wins:
# let one loop own a checkpoint, its saves under a lock
# ([part 5](05_several_tool_calls_in_one_turn.ipynb)).
#
# ## What real systems store
#
# Production systems keep the same six things under other names, plus identity. Each has its
# `pendingToolUse`: a way to say "this step started, its result is not recorded".
#
# | system | what plays `pendingToolUse` | what it stores beyond the six fields |
# |---|---|---|
# | LangGraph checkpointers | the tasks scheduled to run next (`StateSnapshot.next`) | a checkpoint per super-step; a thread id, the parent checkpoint's id, a format version `v` (our `version`) |
# | Temporal | an ActivityTaskScheduled event with no completion event | the full event history; an activity id and attempt number |
# | DBOS, Restate, Inngest | the first step with no recorded output | a workflow id; stable step ids |
# | OpenAI Agents SDK `RunState` | the interruptions of the current step | `$schemaVersion` (our `version`); usage per response (our `tokensUsed`, finer) |
# | Claude Code checkpoints | none: one checkpoint per user prompt, for `/rewind` | snapshots of your files: an undo feature, not crash recovery ([part 6](06_claude_code_and_what_checkpoints_cost.ipynb)) |
#
# Four differences stand out.
#
# - **Identity.** A stable id for every run and step: "step 7 already ran" is not "a new step 7".
# - **Appending.** Temporal's event history and the step logs append rather than rewrite (part 6
#   measures why). Temporal recovers by *replaying* the workflow's code against its history,
#   reusing each recorded activity result: Level 4's "reuse each entry that has a result", made
#   general.
# - **When the save happens.** LangGraph checkpoints once per *super-step* (the nodes that run
#   in parallel in one step), and by default (`durability="async"`) writes it *while* the next
#   step runs; only `"sync"` waits. Save point A must be on disk before the tool starts: the
#   default trades that window for speed. (Its `pending_writes` are the writes of tasks that
#   *succeeded* in a step where a sibling failed, kept so a retry does not rerun them.)
# - **"Done".** They record that a run finished; this lesson's loops never do (saving only at A,
#   the last save even names a call in flight).

# %% [markdown]
# ## Now change it
#
# Run the fixed-name writers again: is the result valid JSON, and whose turns does it claim?

# %%
import json

with tempfile.TemporaryDirectory() as folder:
    mixed = two_writers(folder, unique_names=False)
    claimed = json.loads(mixed.checkpoint)["turns"] if mixed.valid_json else "(not JSON)"
print(f"{len(mixed.checkpoint):,} bytes; valid JSON: {mixed.valid_json}; turns: {claimed}")

# %% [markdown]
# ## Glossary
#
# - **super-step**: LangGraph's step, whose nodes may run in parallel.
# - **event history**: Temporal's append-only record of a workflow.
# - **replay**: rerunning the code, fed the recorded results.
# - **lock**: lets one writer through at a time.

# %% [markdown]
# ## Key points
#
# - A fixed temp name lets two writers mix bytes; `tempfile.mkstemp(dir=...)` gives each save
#   its own file. The later rename still wins: one loop should own the checkpoint.
# - Real systems keep the six fields, and add stable ids, append-only logs, replay, "done".
# - When a checkpoint reaches the disk is a choice: save point A waits; LangGraph's default
#   does not.
