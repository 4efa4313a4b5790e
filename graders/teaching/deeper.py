"""Demonstrations beyond the source lesson: where temp + rename is still not enough.

- `two_writers`: two saves sharing one fixed temp name, interleaved step by step, really run on
  files: the checkpoint ends up a mix of both. With unique temp names it does not.
- `cross_filesystem_rename`: ``os.replace`` from another filesystem into the checkpoint's
  folder, really tried: it fails with EXDEV (POSIX; reported, not raised, where it cannot be
  shown).

A power cut is shown by `graders.teaching.power_cut`, from the engine that grades Level 3.
"""

from __future__ import annotations

import errno
import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "TwoWriters",
    "two_writers",
    "cross_filesystem_rename",
]


# -- two writers, one temp name ------------------------------------------------------------


@dataclass
class TwoWriters:
    """What two interleaved saves left: the steps, and checkpoint.json at the end."""

    unique_names: bool
    steps: list[str] = field(default_factory=list)
    checkpoint: str = ""
    valid_json: bool = False
    writer: str | None = None
    mixed: bool = False
    cut: int = 0

    def to_text(self) -> str:
        names = "unique temp names (tempfile.mkstemp)" if self.unique_names else \
            "one fixed temp name, checkpoint.json.tmp"
        if self.writer:
            verdict = f"writer {self.writer}'s complete save (the later rename wins)"
        else:
            mix = (f"B's first {self.cut:,} bytes, then A's from byte {self.cut:,} on"
                   if self.mixed else "bytes of both writers")
            valid = ("it parses, yet it is neither writer's save" if self.valid_json else
                     "not valid JSON")
            verdict = f"{mix}: {valid}"
        return "\n".join([f"Two writers, {names}:",
                          *[f"  {i}. {s}" for i, s in enumerate(self.steps, 1)],
                          f"checkpoint.json ({len(self.checkpoint):,} bytes): {verdict}."])


def _state(writer: str, turns: int) -> dict:
    return {"version": 1, "task": "two writers", "turns": turns, "tokensUsed": 10 * turns,
            "messages": [{"role": "user", "content": f"writer {writer} " + "x" * (300 * turns)}],
            "pendingToolUse": None}


def two_writers(directory: str | os.PathLike, *, unique_names: bool) -> TwoWriters:
    """Run two saves of different states in ``directory``, interleaved as two processes might.

    A writes half its temp file; B opens its temp file and writes all of it; A writes the rest
    and renames; B renames. With one fixed temp name, B's open empties the file A is writing.
    """
    folder = Path(directory)
    target = folder / "checkpoint.json"
    target.unlink(missing_ok=True)
    texts = {"A": json.dumps(_state("A", 4)), "B": json.dumps(_state("B", 2))}
    result = TwoWriters(unique_names)

    def temp_for(writer: str) -> Path:
        if not unique_names:
            return folder / "checkpoint.json.tmp"
        fd, name = tempfile.mkstemp(dir=folder, prefix=f"checkpoint.{writer}.", suffix=".tmp")
        os.close(fd)
        return Path(name)

    tmp_a, tmp_b = temp_for("A"), temp_for("B")
    half = len(texts["A"]) // 2
    with open(tmp_a, "w", encoding="utf-8") as fa:
        fa.write(texts["A"][:half])
        fa.flush()
        result.steps.append(f"A opens {tmp_a.name} and writes {half:,} of its "
                            f"{len(texts['A']):,} bytes.")
        with open(tmp_b, "w", encoding="utf-8") as fb:
            fb.write(texts["B"])
            fb.flush()
            result.steps.append(f"B opens {tmp_b.name} and writes all {len(texts['B']):,} of "
                                "its bytes." + (" Opening it for writing emptied it first."
                                                if tmp_a == tmp_b else ""))
        fa.write(texts["A"][half:])
        result.steps.append("A writes the rest of its bytes, at the offset it had reached.")
    os.replace(tmp_a, target)
    result.steps.append(f"A renames {tmp_a.name} over checkpoint.json.")
    try:
        os.replace(tmp_b, target)
        result.steps.append(f"B renames {tmp_b.name} over checkpoint.json.")
    except FileNotFoundError:
        result.steps.append(f"B's rename fails: {tmp_b.name} is gone, A already renamed it.")
    result.checkpoint = target.read_text(encoding="utf-8")
    try:
        json.loads(result.checkpoint)
        result.valid_json = True
    except json.JSONDecodeError:
        result.valid_json = False
    result.writer = next((w for w, t in texts.items() if t == result.checkpoint), None)
    result.cut = half
    result.mixed = result.checkpoint == texts["B"][:half] + texts["A"][half:]
    return result


# -- a rename across filesystems -----------------------------------------------------------


def cross_filesystem_rename(directory: str | os.PathLike,
                            candidates: tuple[str, ...] = ("/dev/shm", "/tmp", "/run")) -> str:
    """Try ``os.replace`` from another filesystem into ``directory``; say what happened."""
    folder = Path(directory)
    here = os.stat(folder).st_dev
    other = next((c for c in candidates if os.path.isdir(c) and os.access(c, os.W_OK)
                  and os.stat(c).st_dev != here), None)
    if other is None:
        return (f"Every folder tried ({', '.join(candidates)}) is on the same filesystem as "
                f"{folder}, so the failure cannot be shown here. Where /tmp is a filesystem of "
                "its own (tmpfs, a separate partition), os.replace from /tmp fails with EXDEV.")
    fd, name = tempfile.mkstemp(dir=other, prefix="checkpoint.", suffix=".tmp")
    with os.fdopen(fd, "w") as f:
        f.write("{}")
    try:
        os.replace(name, folder / "checkpoint.json")
    except OSError as err:
        code = errno.errorcode.get(err.errno, str(err.errno))
        return (f"os.replace({name!r}, {str(folder / 'checkpoint.json')!r}) failed: {code} "
                f"({err.strerror}). {other} is another filesystem than {folder}, and a rename "
                "cannot move a file between filesystems: write the temp file next to "
                "checkpoint.json.")
    else:  # pragma: no cover - a platform that copies across filesystems on rename
        return f"os.replace from {other} worked here; do not rely on it elsewhere."
    finally:
        Path(name).unlink(missing_ok=True)
