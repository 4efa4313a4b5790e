"""Putting back the files a crash left, before a restart loads the code: one function for both
observers.

Standard library only and nothing of ``graders``: the sandbox copies this file beside its
bootstrap and the bootstrap runs it inside the sandbox (:func:`put_back`, in restart mode); the
in-process recorder imports it. Both therefore put a crash state back with the same file
operations, which their observer records.
"""

import binascii
import os
import re

__all__ = ["put_back"]


def put_back(entries, roots, pid):
    """Make the files of a crash state, in the order given, as a restarted process finds them.

    ``entries``: ``{"path", "kind", "data", "target", "named_after_pid"}``, paths as the judge
    names them (``/work/...``, ``/tmp/...``), a file's bytes in base64; ``roots``: the folder that
    stands for ``/work`` and for ``/tmp`` here; ``pid``: this process's id. An entry elsewhere,
    or with ``..`` in its path, is skipped. A name the judge marks as made from the killed
    process's id (``named_after_pid``) is made from ``pid`` instead."""
    # os.open and the rest are looked up at each call: the in-process recorder's patches record
    # them (a name bound at import would bypass the recorder).
    for entry in entries:
        top, _, rest = entry["path"].lstrip("/").partition("/")
        if "/" + top not in roots or ".." in rest.split("/"):
            continue
        killed = entry.get("named_after_pid")
        if isinstance(killed, int) and not isinstance(killed, bool) and killed != pid:
            folder, _, name = rest.rpartition("/")
            name = re.sub(rf"(?<![0-9]){killed}(?![0-9])", str(pid), name)
            rest = folder + "/" + name if folder else name
        path = roots["/" + top] + ("/" + rest if rest else "")
        kind = entry["kind"]
        if kind == "dir":
            os.makedirs(path, exist_ok=True)
        elif kind == "symlink":
            os.symlink(entry["target"], path)
        elif kind == "fifo":
            os.mkfifo(path)
        elif kind == "file":
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            try:
                data = memoryview(binascii.a2b_base64(entry["data"]))
                while data:
                    data = data[os.write(fd, data):]
            finally:
                os.close(fd)
