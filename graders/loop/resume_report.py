"""What `resume` reports: the steps it took and the `Problem` objects where it fell over; and
what it reads off a conversation to say it (tool results so far, a call left unanswered, a call in
one line), which the judge reads the same way."""

from __future__ import annotations

import html
import json
from dataclasses import dataclass, field

__all__ = ["Problem", "ResumeReport", "tool_results", "dangling_tool_use", "describe_call"]


@dataclass(frozen=True)
class Problem:
    """Something resume ran into: ``field`` is one of the six fields, or ``None`` for the file."""

    field: str | None
    message: str

    def __str__(self) -> str:
        return f"{self.field or 'checkpoint.json'}: {self.message}"

    def _repr_html_(self) -> str:
        return (f'<p class="cl-resume-problem" style="color:#b42318">'
                f"<code>{html.escape(self.field or 'checkpoint.json')}</code>: "
                f"{html.escape(self.message)}</p>")


@dataclass
class ResumeReport:
    """What `resume` did and found.

    Attributes:
        ok: True when resume found nothing wrong (``problems`` is empty).
        steps: what resume did, in order, one sentence each.
        problems: where resume fell over, and why (`Problem` objects with ``.field``, ``.message``).
        finished: True when the model gave its final answer after resuming.
        state: the state resume held in memory when it stopped (``None`` if it never built one).
        ledger: the tool calls resume ran, in order, as ``(name, input)`` pairs.
        turns_run: how many turns (tool results) the messages hold when resume stops.
        turns_counted: what the ``turns`` counter said when resume stopped.
        capped_at_turn: the counted turn at which the max-turn cap stopped the loop, or ``None``.
        compaction_at_turn: the counted turn at which compaction would have run, or ``None``.
    """

    steps: list[str] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    finished: bool = False
    state: dict | None = None
    ledger: list[tuple[str, dict]] = field(default_factory=list)
    turns_run: int = 0
    turns_counted: int = 0
    capped_at_turn: int | None = None
    compaction_at_turn: int | None = None

    @property
    def ok(self) -> bool:
        return not self.problems

    def problem(self, field_name: str | None) -> Problem | None:
        """The first problem about ``field_name`` (one of the six fields, or ``None``), if any."""
        return next((p for p in self.problems if p.field == field_name), None)

    @property
    def outcome(self) -> str:
        """One line: how the resume ended."""
        first = self.problems[0] if self.problems else None
        if first is not None and first.field == "version":
            how = "refused to load the checkpoint"
        elif self.finished:
            how = "resumed and finished the task"
        elif self.capped_at_turn is not None:
            how = f"stopped by the max-turn cap at turn {self.capped_at_turn}"
        elif self.state is None:
            how = "could not resume: nothing usable to start from"
        else:
            how = "resume fell over part-way"
        if self.problems:
            count = len(self.problems)
            how += f", with {count} problem{'s' if count > 1 else ''}"
        return how[0].upper() + how[1:] + "."

    def to_text(self) -> str:
        """The report as plain text: the outcome, the steps, then the problems."""
        lines = [self.outcome]
        if self.steps:  # no heading over an empty list (a refused checkpoint takes no step)
            lines += ["", "What resume did:"]
            lines += [f"  {i}. {step}" for i, step in enumerate(self.steps, 1)]
        if self.problems:
            lines += ["", "Where it falls over:"]
            lines += [f"  - {p}" for p in self.problems]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        colour = "#1a7f37" if self.ok else "#b42318"
        parts = [
            '<div class="cl-resume-report">',
            f'<p style="color:{colour};font-weight:bold">{html.escape(self.outcome)}</p>',
        ]
        if self.steps:
            parts += ["<p>What resume did:</p><ol>",
                      *(f"<li>{html.escape(step)}</li>" for step in self.steps), "</ol>"]
        if self.problems:
            parts.append("<p>Where it falls over:</p><ul>")
            parts += [
                f"<li><code>{html.escape(p.field or 'checkpoint.json')}</code>: "
                f"{html.escape(p.message)}</li>"
                for p in self.problems
            ]
            parts.append("</ul>")
        parts.append("</div>")
        return "".join(parts)

    def __repr__(self) -> str:
        return f"<ResumeReport {self.outcome} {len(self.steps)} steps>"


def tool_results(messages: list) -> int:
    """How many tool_result blocks ``messages`` hold: the turns that really ran."""
    count = 0
    for message in messages:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list):
            count += sum(isinstance(b, dict) and b.get("type") == "tool_result" for b in content)
    return count


def dangling_tool_use(messages: list) -> dict | None:
    """The tool_use block of a last assistant message that no tool_result answers, if any."""
    if not messages or not isinstance(messages[-1], dict):
        return None
    last = messages[-1]
    if last.get("role") != "assistant" or not isinstance(last.get("content"), list):
        return None
    return next((b for b in last["content"] if isinstance(b, dict) and b.get("type") == "tool_use"),
                None)


def describe_call(call: dict) -> str:
    """``name({input}) (id ...)``, the input cut to 60 characters: a call in one line."""
    arguments = json.dumps(call.get("input"), separators=(",", ":"))
    if len(arguments) > 60:
        arguments = arguments[:57] + "..."
    return f"{call.get('name')}({arguments}) (id {call.get('id')})"
