"""Small wording helpers every message of the course shares: counts, shortened values, file tails.

One copy each, so that "1 save" / "2 saves" and a cut-off value read the same in a lesson, in
feedback and in the command line.
"""

from __future__ import annotations

import json
import os
import unicodedata
from pathlib import Path

__all__ = ["plural", "shorten", "short_json", "file_tail", "printable"]


def plural(count: int, word: str) -> str:
    """``count`` and ``word``, with an ``s`` unless the count is 1: ``plural(2, "save")``."""
    return f"{count} {word}" + ("" if count == 1 else "s")


def shorten(text: str, limit: int) -> str:
    """``text`` on one line (runs of whitespace as one space), cut to ``limit`` with ``...``."""
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def short_json(value: object, limit: int = 60) -> str:
    """``value`` as JSON (``repr`` for what JSON cannot hold), cut to ``limit`` with ``...``."""
    text = json.dumps(value, default=repr)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def file_tail(path: Path, size: int = 2000) -> str:
    """The last ``size`` bytes of ``path`` as text (``""`` when it cannot be read)."""
    try:
        with path.open("rb") as handle:
            handle.seek(0, os.SEEK_END)
            handle.seek(max(0, handle.tell() - size))
            return handle.read().decode("utf-8", "replace")
    except OSError:
        return ""


def printable(text: object) -> str:
    """``text`` safe to print on a terminal: line breaks and tabs become spaces, and every other
    control or format character (an escape sequence, a bidi override) shows as its escape
    (``\\x1b``), so that a string from a student's code cannot move the cursor or forge lines."""
    out = []
    for char in str(text):
        category = unicodedata.category(char)
        if char in "\t\n\r\v\f" or category in ("Zl", "Zp"):
            out.append(" ")
        elif category in ("Cc", "Cf", "Cs", "Co", "Cn") and char != " ":
            out.append(char.encode("unicode_escape").decode("ascii"))
        else:
            out.append(char)
    return "".join(out)
