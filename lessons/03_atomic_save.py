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
# # Checkpoints · Part 3 of 6: the atomic save
#
# [Part 2](02_two_save_points.ipynb) placed the saves. This part is about the save itself: why
# overwriting `checkpoint.json` in place is not safe, and the write that is.
#
# ## The obvious save
#
# Serialize the state and write it straight over the old file, as the lesson's "in place" loop
# does:

# %%
from graders.teaching.code_view import show_code
from graders.teaching.variants import lesson_function

show_code(lesson_function("save_checkpoint", write_mode="in place"), language="python")

# %% [markdown]
# If the process always ran to its end, this would do. But nobody adds checkpoints for the runs
# that end well: they are there for the run that is killed without warning, by a crash, a
# power cut, or a container being evicted. And writing a file is not one indivisible step:
# opening it for writing empties it at once, and the new bytes follow a buffer at a time.
#
# ## A real torn write
#
# The harness runs the lesson's loop (B only, in place) and kills it halfway through save 2
# (save point B after tool 2): the kernel lets the write reach half of its bytes, then stops the
# process.

# %%
from graders.teaching.predict import compare, predict

predict("torn_in_place")

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
compare("torn_in_place")

# %% [markdown]
# The file was cut off mid-string. Resume's first step, parsing it, fails:

# %%
report = resume(torn.checkpoint)
print(report.to_text())

# %% [markdown]
# And there is nothing to fall back on: save 1 was a complete checkpoint a moment ago, but
# opening the file for writing emptied it before the first new byte went in. The only copy of the
# scene is half a JSON document, and the task starts over from zero. Starting over means running
# the tools again: `list_tickets`, and `build_table` too, although `build_table` had *finished*
# before the save that tore. Here, running a tool twice only wastes time; a tool that sends an
# email or charges a card would do it twice. The course's next lesson, *Resuming from a
# checkpoint*, uses each call's `tool_use` id as an idempotency key so that a tool can tell a
# repeat from a new request.
#
# ## Temp file, then an atomic rename
#
# The fix: write the whole new save into a temp file next to `checkpoint.json`, and only when it
# is complete, rename it over `checkpoint.json`. A crash during the write only damages the temp
# file; the real checkpoint is still the previous complete save. The lesson's atomic save:

# %%
show_code(lesson_function("save_checkpoint", write_mode="temp + rename"), language="python")

# %% [markdown]
# The same loop with this save, and the same crash, halfway through save 2; then a kill just
# before its rename:

# %%
predict("torn_atomic")

# %%
with Harness(variant("B only", "temp + rename")) as harness:
    torn_temp = harness.run_point("support-tickets", "torn_write_save_2")
    before_rename = harness.run_point("support-tickets", "killed_before_rename_save_2")

for obs in (torn_temp, before_rename):
    print(describe_run(obs))
    print("Resume:", resume(obs.checkpoint).outcome)
    print()
compare("torn_atomic")

# %% [markdown]
# Both times `checkpoint.json` is save 1, complete and readable, and resume carries on from it.
# The half-written (or complete but unrenamed) temp file lies beside it; resume never reads it.
# (A save can delete its temp file when it fails with an exception; a killed process cannot
# clean up, so a real resume may sweep up stale `checkpoint.*.tmp` files.)
#
# ## Why the rename is atomic, and the small print
#
# - **One step.** On one filesystem, POSIX `rename(2)` replaces the directory entry in a single
#   step: at every instant, whoever opens `checkpoint.json` gets the old file or the new one,
#   whole. That is a promise about what *running programs see*. Whether the new save survives
#   a *power cut* is a separate question, with a separate answer ([part 4](04_going_deeper.ipynb)).
# - **`os.replace`, not `os.rename`.** On Linux and macOS both are `rename(2)`. On Windows
#   `os.rename` fails when `checkpoint.json` already exists, which is every save after the first;
#   `os.replace` replaces it. Windows does not document that replacement as atomic, though, and it
#   fails while another process holds the file open: the "old or new, never half" guarantee is a
#   POSIX one.
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
# The lesson's save therefore creates its temp file with `dir=` set to the checkpoint's own
# folder, and lets `tempfile` pick a name of its own for every save
# ([part 4](04_going_deeper.ipynb) shows why a fixed `checkpoint.json.tmp` is a risk).
#
# ## Check yourself

# %%
from graders.teaching.widgets import show_quiz

show_quiz("replace_not_rename")

# %% [markdown]
# Next: [part 4, going deeper](04_going_deeper.ipynb): what temp + rename still does not survive.
