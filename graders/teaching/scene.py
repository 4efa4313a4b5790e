"""Small helpers the lesson uses to talk about one crash run: what it left, what it did."""

from __future__ import annotations

import copy
import re
import textwrap
from collections.abc import Iterable, Mapping

from graders.judge.recording import Observation

__all__ = ["without", "describe_run", "ledger_lines", "ran_twice", "wrap_text", "say"]

#: The width printed text is wrapped to: a notebook's output area wraps longer lines anywhere,
#: in the middle of a word too.
WIDTH = 88


def wrap_text(text: str, width: int = WIDTH) -> str:
    """``text`` with every line wrapped at word boundaries to ``width`` columns; a wrapped line
    goes on under its own text (after its indent and any ``- `` or ``1. `` bullet)."""
    out = []
    for line in str(text).splitlines() or [""]:
        head = re.match(r"\s*(?:[-*]\s+|\d+\.\s+)?", line).group(0)
        out.extend(textwrap.wrap(line, width, subsequent_indent=" " * len(head),
                                 break_long_words=False, break_on_hyphens=False) or [""])
    return "\n".join(out)


def say(*parts) -> None:
    """Print ``parts`` (joined by spaces), wrapped as :func:`wrap_text` wraps."""
    print(wrap_text(" ".join(str(p) for p in parts)))


def without(checkpoint: Mapping, *fields: str) -> dict:
    """A copy of ``checkpoint`` with ``fields`` taken out (the original is left alone)."""
    copied = copy.deepcopy(dict(checkpoint))
    unknown = [f for f in fields if f not in copied]
    if unknown:
        raise KeyError(f"the checkpoint has no field {unknown[0]!r}; it has {', '.join(copied)}")
    for name in fields:
        del copied[name]
    return copied


def ledger_lines(entries: Iterable) -> list[str]:
    """One line per tool execution, from a harness ledger or a `ResumeReport.ledger`."""
    lines = []
    for number, entry in enumerate(entries, 1):
        if isinstance(entry, Mapping):
            name, finished = entry.get("name"), "result" in entry or "error" in entry
        else:
            name, finished = entry[0], True
        lines.append(f"{number}. {name}" + ("" if finished else " (killed before it returned)"))
    return lines


def ran_twice(first_run: Iterable[Mapping], resumed: Iterable) -> list[str]:
    """The tools that ran in the crashed run and ran again after resume (same name and input)."""
    before = [(e.get("name"), e.get("input")) for e in first_run]
    return [name for name, tool_input in resumed if (name, tool_input) in before]


def _times(count: int) -> str:
    """``"once"``, ``"2 times"``: how often something was called."""
    return "once" if count == 1 else f"{count} times"


def describe_run(obs: Observation) -> str:
    """What one crash run did and left on disk, in a few lines."""
    lines = [f"Crash point: {obs.point} ({obs.detail})."]
    if obs.checkpoint is None:
        lines.append("On disk: no checkpoint.json.")
    elif obs.parse_error:
        lines.append(f"On disk: checkpoint.json, {obs.checkpoint_bytes:,} bytes, and it "
                     f"{obs.parse_error}.")
    else:
        lines.append(f"On disk: checkpoint.json, {obs.checkpoint_bytes:,} bytes of valid JSON.")
    if obs.files:
        lines.append("Other files: " + ", ".join(f"{k} ({v} bytes)" for k, v in obs.files.items()))
    lines.append(f"save_checkpoint was called {_times(len(obs.saves))}; the model "
                 f"{_times(obs.model_calls)}; the tools {_times(obs.tool_calls)}.")
    ledger = ledger_lines(obs.ledger)
    lines.append("Ledger (tools that really ran): " + ("; ".join(ledger) if ledger else "none"))
    return wrap_text("\n".join(lines))
