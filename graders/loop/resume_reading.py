"""Resume's first step: turn what it was given (a dict, JSON text, a path) into a checkpoint."""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any

from graders.loop.resume_report import Problem, ResumeReport

__all__ = ["read_checkpoint"]


def read_checkpoint(checkpoint: Any, report: ResumeReport) -> dict | None:
    """Turn a dict, JSON text or a path into the checkpoint dict, or record why not."""
    if checkpoint is None:
        report.problems.append(Problem(None, (
            "there is no checkpoint.json: nothing to resume from, so the task can only start "
            "over from zero."
        )))
        return None
    if isinstance(checkpoint, dict):
        return copy.deepcopy(checkpoint)
    if isinstance(checkpoint, bytes):
        checkpoint = checkpoint.decode("utf-8", errors="replace")
    if isinstance(checkpoint, os.PathLike) or (
        isinstance(checkpoint, str) and checkpoint.strip()
        and not checkpoint.lstrip().startswith(("{", "[")) and "\n" not in checkpoint
    ):
        path = Path(checkpoint)
        if not path.exists():
            report.problems.append(Problem(None, (
                f"there is no checkpoint at {path}: nothing to resume from, so the task can only "
                "start over from zero."
            )))
            return None
        try:
            checkpoint = path.read_text(encoding="utf-8", errors="replace")
        except OSError as err:
            report.problems.append(Problem(None, (
                f"{path} could not be read ({err.strerror}): nothing to resume from."
            )))
            return None
        report.steps.append(f"Read {path} ({len(checkpoint.encode()):,} bytes).")
    if not isinstance(checkpoint, str):
        report.problems.append(Problem(None, (
            f"resume was given a {type(checkpoint).__name__}; it reads a checkpoint as a dict, "
            "JSON text or a path to checkpoint.json."
        )))
        return None
    try:
        data = json.loads(checkpoint)
    except json.JSONDecodeError as err:
        report.problems.append(Problem(None, (
            f"it is not valid JSON ({err.msg}, character {err.pos:,} of {len(checkpoint):,}): "
            "a torn write. The parse fails, and this file was the only copy of the scene, so the "
            "task can only start over from zero."
        )))
        return None
    if not isinstance(data, dict):
        report.problems.append(Problem(None, (
            f"it holds a JSON {type(data).__name__}, not an object with the six fields."
        )))
        return None
    report.steps.append("Parsed the checkpoint: fields " + ", ".join(data) + ".")
    return data
