"""Show a checkpoint readably: the six fields, messages one line each, chosen fields highlighted."""

from __future__ import annotations

import html
import json
from collections.abc import Iterable, Mapping

from graders.loop.protocol import SIX_FIELDS
from graders.text import shorten

__all__ = ["CheckpointView", "FIELD_PURPOSES", "summarize_message", "show_checkpoint"]

#: What each of the six fields is for, in one line.
FIELD_PURPOSES: dict[str, str] = {
    "version": "the protocol version: resume checks it first and refuses one it does not know",
    "task": "the user's task in words: which task this checkpoint belongs to",
    "turns": "how many turns have run: the max-turn cap counts on from it",
    "tokensUsed": "output tokens so far: the compaction threshold fires off it",
    "messages": "the whole conversation: everything the model knows about what happened",
    "pendingToolUse": "the tool call named but not yet recorded ({id, name, input}), or null",
}

# A highlighted row sets its own text colour, so it stays readable in a dark theme.
_HIGHLIGHT_STYLE = "background:#fff3bf;color:#101828"
_MISSING_STYLE = "color:#b42318;background:#fff;padding:0 0.2em"
# Room between a field's name, its value and its note; a short note stays on one line.
_CELL = "text-align:left;vertical-align:top;padding:2px 1em 2px 0"
_CODE = "color:inherit;background:transparent"



def _compact(value: object, limit: int = 70) -> str:
    return shorten(json.dumps(value, separators=(",", ":"), ensure_ascii=False), limit)


def summarize_message(message: object, limit: int = 90) -> str:
    """One line for one message: its role and what each content block holds."""
    if not isinstance(message, Mapping):
        return shorten(repr(message), limit)
    role = message.get("role", "?")
    content = message.get("content")
    if isinstance(content, str):
        return f"{role}: {shorten(repr(content), limit)}"
    parts = []
    for block in content if isinstance(content, list) else []:
        kind = block.get("type") if isinstance(block, Mapping) else None
        if kind == "text":
            parts.append(f"text {shorten(repr(block.get('text', '')), 40)}")
        elif kind == "tool_use":
            parts.append(f"tool_use {block.get('name')}({_compact(block.get('input'), 40)}) "
                         f"id {block.get('id')}")
        elif kind == "tool_result":
            body = block.get("content", "")
            size = len(body) if isinstance(body, str) else len(json.dumps(body))
            parts.append(f"tool_result for {block.get('tool_use_id')} ({size:,} chars)")
        else:
            parts.append(shorten(repr(block), 30))
    return f"{role}: " + " + ".join(parts)


class CheckpointView:
    """A checkpoint as a table of its fields, with ``highlight`` fields marked.

    ``notes`` maps a field to a short remark shown beside it (why it matters at this moment).
    A field of the six that the checkpoint lacks is shown as missing. Renders as HTML in a
    notebook, and as text with ``to_text()`` (``>>`` marks a highlighted field).
    """

    def __init__(
        self,
        checkpoint: Mapping,
        *,
        highlight: Iterable[str] = (),
        notes: Mapping[str, str] | None = None,
        title: str = "checkpoint.json",
    ) -> None:
        self.checkpoint = dict(checkpoint)
        self.highlight = tuple(highlight)
        self.notes = dict(notes or {})
        self.title = title

    def _fields(self) -> list[str]:
        extra = [k for k in self.checkpoint if k not in SIX_FIELDS]
        return [*SIX_FIELDS, *extra]

    def _value_lines(self, name: str) -> list[str]:
        value = self.checkpoint[name]
        if name == "messages" and isinstance(value, list):
            return [f"[{i}] {summarize_message(m)}" for i, m in enumerate(value)]
        return [_compact(value, 110)]

    def to_text(self) -> str:
        lines = [self.title]
        for name in self._fields():
            mark = ">>" if name in self.highlight else "  "
            note = f"   <- {self.notes[name]}" if name in self.notes else ""
            if name not in self.checkpoint:
                lines.append(f"{mark} {name}: (missing){note}")
                continue
            values = self._value_lines(name)
            if name == "messages" and isinstance(self.checkpoint[name], list):
                lines.append(f"{mark} {name}: {len(values)} messages{note}")
                lines += [f"       {v}" for v in values]
            else:
                lines.append(f"{mark} {name}: {values[0]}{note}")
        return "\n".join(lines)

    __str__ = to_text

    def _repr_html_(self) -> str:
        rows = []
        for name in self._fields():
            style = _HIGHLIGHT_STYLE if name in self.highlight else ""
            cls = "cl-field cl-field-highlight" if name in self.highlight else "cl-field"
            if name not in self.checkpoint:
                value = f'<span style="{_MISSING_STYLE}">(missing)</span>'
            else:
                value = "<br>".join(html.escape(v) for v in self._value_lines(name))
            note = html.escape(self.notes.get(name, ""))
            rows.append(
                f'<tr class="{cls}" data-field="{html.escape(name)}" style="{style}">'
                f'<td class="cl-field-name" style="{_CELL}">'
                f'<code style="{_CODE}">{html.escape(name)}</code></td>'
                f'<td class="cl-field-value" style="{_CELL};font-family:monospace;'
                f'font-size:90%">{value}</td>'
                f'<td class="cl-note" style="{_CELL};min-width:14em"><em>{note}</em></td>'
                "</tr>"
            )
        return (
            f'<div class="cl-checkpoint"><b>{html.escape(self.title)}</b>'
            f'<table style="border-collapse:collapse">{"".join(rows)}</table></div>'
        )

    def __repr__(self) -> str:
        return f"<CheckpointView {self.title} fields={list(self.checkpoint)}>"


def show_checkpoint(checkpoint: Mapping, *, highlight: Iterable[str] = (),
                    notes: Mapping[str, str] | None = None,
                    title: str = "checkpoint.json") -> CheckpointView:
    """A `CheckpointView` of ``checkpoint``; display it in a notebook cell."""
    return CheckpointView(checkpoint, highlight=highlight, notes=notes, title=title)
