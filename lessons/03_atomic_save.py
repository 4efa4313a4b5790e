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
# # Checkpoints · Part 3 of 7: the atomic save
#
# **Time:** about 20 minutes.
# **Questions:** Why is overwriting `checkpoint.json` in place not safe? What kind of write can a
# kill never tear?
# **Objectives:** say what a kill during an in-place save leaves; write a save that goes through
# a temp file in the same folder and one `os.replace`, and say why each part matters.
#
# [Part 2](02_two_save_points.ipynb) placed the saves. This part is about the save itself.
#
# ## The obvious save
#
# Serialize the state and write it straight over the old file, as the lesson's "in place" loop
# does:

# %%
from graders.notebook import lesson_function, show_code

show_code(lesson_function("save_checkpoint", write_mode="in place"), language="python")

# %% [markdown]
# Checkpoints are for the run that is killed without warning, and writing a file is not one
# step: opening it for writing empties it, and the new bytes follow a buffer at a time.
#
# ## A real torn write
#
# The harness kills the lesson's loop (B only, in place) part-way through save 2: the kernel lets
# the write go on up to a byte count the harness picks, then stops the process. Here the count
# is save 1's length, on purpose: watch the file's size.

# %%
from graders.notebook import compare, predict

predict("torn_in_place")

# %%
from graders.notebook import Harness, describe_run, resume, say, variant

with Harness(variant("B only", "in place")) as harness:
    torn = harness.run_point("support-tickets", "torn_write_save_2")

print(describe_run(torn))
print()
print("The last bytes on disk:", repr(torn.checkpoint[-60:]))
compare("torn_in_place")

# %% [markdown]
# Resume's first step, parsing the file, fails:

# %%
say(resume(torn.checkpoint).to_text())

# %% [markdown]
# The file is exactly as long as save 1 was, and it is not save 1: the same size is no evidence
# that a file is whole. Nothing is left to fall back on: opening the file emptied save 1. The task starts over, and
# the tools run again, `build_table` too, although it had *finished*: a tool that sends an email
# would send it twice. (The next lesson uses each call's `tool_use` id as an idempotency key.)
#
# ## Temp file, then an atomic rename
#
# Write the whole save into a temp file next to `checkpoint.json`, and only when it is complete,
# rename it over `checkpoint.json`. A crash during the write damages only the temp file:

# %%
show_code(lesson_function("save_checkpoint", write_mode="temp + rename"), language="python")

# %% [markdown]
# The same loop with this save, and the same crash, part-way through save 2; then a kill just
# before its rename:

# %%
predict("torn_atomic")

# %%
with Harness(variant("B only", "temp + rename")) as harness:
    torn_temp = harness.run_point("support-tickets", "torn_write_save_2")
    before_rename = harness.run_point("support-tickets", "killed_before_rename_save_2")

for obs in (torn_temp, before_rename):
    print(describe_run(obs))
    say("Resume:", resume(obs.checkpoint).outcome)
    print()
compare("torn_atomic")

# %% [markdown]
# Resume never reads the temp file left beside it. (A killed save cannot clean up, so a real
# resume may sweep stale `checkpoint.*.tmp` files.)
#
# ## Why the rename is atomic, and the small print
#
# - **One step.** On one filesystem, POSIX `rename(2)` swaps the directory entry at once:
#   whoever opens `checkpoint.json` gets the old file or the new one, whole. That is about what
#   *running programs see*; a *power cut* is [part 4](04_power_cuts.ipynb).
# - **`os.replace`, not `os.rename`.** On Windows `os.rename` fails when `checkpoint.json`
#   exists, at every save after the first; `os.replace` replaces it, though Windows does not
#   document that as atomic, and it fails while another process holds the file open without
#   sharing it for deletion (as Python's own `open()` does).
# - **The temp file in the same directory.** A rename cannot cross filesystems, and
#   `tempfile.mkstemp()` without `dir=` may land on another one (a tmpfs): the rename fails, or
#   `shutil.move` quietly copies, and a copy tears like any write. Tried for real:

# %%
import tempfile

from graders.notebook import cross_filesystem_rename

with tempfile.TemporaryDirectory() as folder:
    say(cross_filesystem_rename(folder))

# %% [markdown]
# So the lesson's save passes `dir=` the checkpoint's folder, with a fresh name for every save
# (why not a fixed name: [the appendix](08_appendix_what_real_systems_store.ipynb)).
#
# ## Check yourself

# %%
from graders.notebook import show_quiz

show_quiz("replace_not_rename")

# %% [markdown]
# ## Now change it
#
# Tear another save, or kill a temp + rename loop at `killed_before_rename_save_n`; predict,
# then run.

# %%
save_points, write_mode, point = "A and B", "in place", "torn_write_save_3"
with Harness(variant(save_points, write_mode)) as harness:
    seen = harness.run_point("support-tickets", point)
print(describe_run(seen))
say("Resume:", resume(seen.checkpoint).outcome)

# %% [markdown]
# ## Glossary
#
# - **in place**: writing into `checkpoint.json` itself.
# - **torn write**: a save cut off part-way.
# - **atomic save**: a temp file in the same directory, then `os.replace`.
# - **EXDEV**: the error of a rename across filesystems.

# %% [markdown]
# ## Key points
#
# - Writing `checkpoint.json` in place empties it first: a kill part-way leaves a prefix of the
#   new save and nothing of the old one, and resume cannot parse it.
# - Write the whole save to a temp file in the checkpoint's own folder, then `os.replace` it over
#   `checkpoint.json`: a kill leaves the previous save or the new one, whole.
# - `os.replace`, not `os.rename` (Windows); never a temp file on another filesystem (EXDEV, or a
#   copy that can tear).
#
# Next: [Level 2](../exercises/02_two_latent_failures.ipynb), then
# [part 4, power cuts](04_power_cuts.ipynb): what temp + rename still does not survive.
