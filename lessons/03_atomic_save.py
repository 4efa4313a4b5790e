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
# # Lesson 2 · Part 3: the atomic save
#
# [Part 2](02_two_save_points.ipynb) placed the saves. This part is about the save itself: why
# overwriting `checkpoint.json` in place is not safe, and the write that is.
#
# ## The obvious save
#
# Serialize the state and write it straight over the old file. This is the starter's
# `save_checkpoint`:

# %%
from IPython.display import Code

from graders.teaching.variants import function_source

Code(function_source("starter", "save_checkpoint"), language="python")

# %% [markdown]
# When the process exits normally, that is fine. But a normal exit is exactly the case
# checkpoints are not for: they exist for the process killed at any moment, the power cut, the
# container evicted. Writing a file is not one atomic step. `open(..., "w")` empties the file
# at once, and the new bytes follow, a buffer at a time. Killed in between, the process leaves a
# file that is neither the old save nor the new one.
#
# ## A real torn write
#
# The harness runs the starter's loop and kills it halfway through save 2 (save point B after
# tool 2): the kernel lets the write reach half of its bytes, then stops the process.

# %%
from graders.harness import Harness
from graders.resume import resume
from graders.teaching.scene import describe_run
from graders.teaching.variants import variant

with Harness(variant("B only", "in place")) as harness:
    torn = harness.run_point("support-tickets", "torn_write_save_2")

print(describe_run(torn))
print()
print("The last bytes on disk:", repr(torn.checkpoint[-60:]))

# %% [markdown]
# The file was cut off mid-string. Resume's first step, parsing it, fails:

# %%
print(resume(torn.checkpoint).to_text())

# %% [markdown]
# And there is nothing to fall back on: save 1 was a complete checkpoint a moment ago, but
# opening the file for writing emptied it before the first new byte went in. The only copy of the
# scene is half a JSON document; the task starts over from zero, after `list_tickets` and
# `build_table` already ran.
#
# ## Temp file, then an atomic rename
#
# The fix: write the whole new save into a temp file next to `checkpoint.json`, and only when it
# is complete, rename it over `checkpoint.json`. A crash during the write only damages the temp
# file; the real checkpoint is still the previous complete save. The reference's save:

# %%
Code(function_source("reference", "save_checkpoint"), language="python")

# %% [markdown]
# The same loop (B only) with this save, and the same crash, halfway through save 2; then a kill
# just before its rename:

# %%
with Harness(variant("B only", "temp + rename")) as harness:
    torn_temp = harness.run_point("support-tickets", "torn_write_save_2")
    before_rename = harness.run_point("support-tickets", "killed_before_rename_save_2")

for obs in (torn_temp, before_rename):
    print(describe_run(obs))
    print("Resume:", resume(obs.checkpoint).outcome)
    print()

# %% [markdown]
# Both times `checkpoint.json` is save 1, complete and readable, and resume carries on from it.
# The half-written (or complete but unrenamed) temp file lies beside it; resume never reads it.
# (The reference deletes its temp file when a save fails with an exception; a killed process
# cannot clean up, so a real resume may sweep up stale `checkpoint.*.tmp` files.)
#
# ## Why the rename is atomic, and the small print
#
# - **One step.** On one filesystem, a rename replaces the directory entry in a single step: at
#   every instant, whoever opens `checkpoint.json` gets the old file or the new one, whole. There
#   is no half-renamed state (POSIX `rename(2)`).
# - **`os.replace`, not `os.rename`.** On Linux and macOS both replace an existing target
#   atomically. On Windows `os.rename` fails when `checkpoint.json` already exists, which is
#   every save after the first; `os.replace` replaces it everywhere. (Even `os.replace` can fail
#   on Windows while another process holds the file open.)
# - **The temp file in the same directory.** A rename cannot move a file to another filesystem.
#   `tempfile.mkstemp()` with no `dir=` puts the file in the system temp folder, which may be
#   another filesystem (a tmpfs, say); then the rename fails, or `shutil.move` quietly falls
#   back to copying, and a copy can tear like any write. Here it is, tried for real:

# %%
import tempfile

from graders.teaching.deeper import cross_filesystem_rename

with tempfile.TemporaryDirectory() as folder:
    print(cross_filesystem_rename(folder))

# %% [markdown]
# The reference therefore calls `tempfile.mkstemp(dir=directory)`, with the checkpoint's own
# directory, which also gives every save a temp name of its own ([part 4](04_going_deeper.ipynb)
# shows why a fixed `checkpoint.json.tmp` is a risk).
#
# ## Check yourself

# %%
from graders.teaching.widgets import show_quiz

show_quiz("replace_not_rename")

# %% [markdown]
# Next: [part 4, going deeper](04_going_deeper.ipynb): what temp + rename still does not survive.
