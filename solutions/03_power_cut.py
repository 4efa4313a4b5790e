"""Level 3, fixed: an atomic save that also survives a power cut.

Level 2's atomic save survives a killed process: the kernel still writes out what the process
left in the page cache. A power cut takes the page cache with it, so two more things must reach
the disk before the loop goes on to run a tool:

1. the temp file's bytes, before the rename makes it the checkpoint (``os.fsync`` on the file),
   or after a power cut the rename can be on disk while the bytes are not: an empty
   ``checkpoint.json``;
2. the rename itself, by syncing the folder that holds the checkpoint (``os.fsync`` on a file
   descriptor of the directory), or after a power cut the previous checkpoint can come back
   although the loop already ran the next tool.

``f.flush()`` comes before ``os.fsync``: until then the bytes are in Python's own buffer, where
no sync reaches them. On macOS ``os.fsync`` does not flush the drive's own cache: there
``fcntl.F_FULLFSYNC`` does (lesson part 4). On Windows Python cannot open a folder to sync it.
"""

from __future__ import annotations

import json
import os
import tempfile

CHECKPOINT = "checkpoint.json"


def save_checkpoint(state):
    """Write ``state`` to ``checkpoint.json`` atomically and durably."""
    directory = os.path.dirname(os.path.abspath(CHECKPOINT))
    fd, tmp_path = tempfile.mkstemp(dir=directory, prefix="checkpoint.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(state, f)
            f.flush()
            os.fsync(f.fileno())  # 1. the bytes are on disk before the rename
        os.replace(tmp_path, CHECKPOINT)
    except BaseException:
        try:
            os.remove(tmp_path)
        except FileNotFoundError:
            pass
        raise
    folder = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(folder)  # 2. the rename is on disk before the loop runs a tool
    finally:
        os.close(folder)
