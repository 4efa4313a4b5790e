"""A small reference resume routine: read ``checkpoint.json`` and run the loop on from it.

Lesson 2 uses it to show, field by field, where resuming falls over when a checkpoint lacks one
of the six fields (Lesson 3 treats resume fully). It runs the rest of the task against a fresh
fake model and fake tools of a `fake_llm` scenario, in memory, and never saves anything.

``resume`` never raises on a bad checkpoint: everything it finds wrong is a `Problem` in the
report, with the field it concerns and what resume ran into, in the lesson's words.

    >>> report = resume("checkpoint.json")          # a path, JSON text, or a dict
    >>> report.ok, report.finished
    (True, True)
    >>> print(report.to_text())
"""

from __future__ import annotations

import copy
import html
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fake_llm import ConversationError, FakeLLMError, load_scenario
from graders.loop.protocol import SIX_FIELDS
from graders.text import plural

__all__ = [
    "resume",
    "ResumeReport",
    "Problem",
    "KNOWN_VERSIONS",
    "SIX_FIELDS",
    "DEFAULT_COMPACTION_THRESHOLD",
]

#: The protocol versions this routine knows how to read.
KNOWN_VERSIONS = (1,)
#: The six fields of a checkpoint, in the lesson's order.
#: Where the context-engineering course's compaction would run, in tokens used so far.
DEFAULT_COMPACTION_THRESHOLD = 100_000


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


def _load(checkpoint: Any, report: ResumeReport) -> dict | None:
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



def _tool_results(messages: list) -> int:
    count = 0
    for message in messages:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list):
            count += sum(isinstance(b, dict) and b.get("type") == "tool_result" for b in content)
    return count


def _dangling_tool_use(messages: list) -> dict | None:
    """The tool_use block of a last assistant message that no tool_result answers, if any."""
    if not messages or not isinstance(messages[-1], dict):
        return None
    last = messages[-1]
    if last.get("role") != "assistant" or not isinstance(last.get("content"), list):
        return None
    return next((b for b in last["content"] if isinstance(b, dict) and b.get("type") == "tool_use"),
                None)


def _describe_call(call: dict) -> str:
    arguments = json.dumps(call.get("input"), separators=(",", ":"))
    if len(arguments) > 60:
        arguments = arguments[:57] + "..."
    return f"{call.get('name')}({arguments}) (id {call.get('id')})"


def resume(
    checkpoint: Any,
    *,
    scenario: str = "support-tickets",
    max_turns: int = 10,
    compaction_threshold: int = DEFAULT_COMPACTION_THRESHOLD,
) -> ResumeReport:
    """Resume the loop from ``checkpoint`` against ``scenario``'s fake model and tools.

    ``checkpoint`` is a dict, the JSON text of checkpoint.json, or a path to it (``None``: there
    is no checkpoint.json, as the harness reports a run that never saved). Resume checks
    the fields in the lesson's order, then runs the loop on (without saving): a pending tool
    call is run again (whether it had already run is Lesson 3's reconciliation), the loop stops
    at ``max_turns`` counted turns, and it notes the turn where ``tokensUsed`` first reaches
    ``compaction_threshold`` (where compaction would run). It never raises on a bad checkpoint.
    """
    report = ResumeReport()
    data = _load(checkpoint, report)
    if data is None:
        return report

    # version: refuse what we do not know, before reading anything else.
    if "version" not in data:
        report.problems.append(Problem("version", (
            "there is no version, so resume cannot tell whether it knows this checkpoint's "
            "format. It refuses to load it rather than parse ahead and misread it."
        )))
        return report
    if data["version"] not in KNOWN_VERSIONS:
        report.problems.append(Problem("version", (
            f"version {data['version']!r} is not one this resume knows "
            f"({', '.join(map(str, KNOWN_VERSIONS))}). It refuses to load it and says so, "
            "rather than parse ahead and misread it."
        )))
        return report
    report.steps.append(f"version {data['version']}: a format this resume knows.")

    try:
        sc = load_scenario(scenario)
    except FakeLLMError as err:
        report.problems.append(Problem(None, f"cannot load the scenario to resume against: {err}"))
        return report

    # task: which task is this?
    task = data.get("task")
    if not isinstance(task, str):
        report.problems.append(Problem("task", (
            "there is no task, so resume cannot say which task this checkpoint belongs to, nor "
            "report to anyone what it is resuming."
        )))
        report.steps.append("Resuming an unnamed task.")
    elif task != sc.task:
        report.problems.append(Problem("task", (
            f"the checkpoint's task is {task!r}, but this run is for {sc.task!r}: "
            "it belongs to another task, so resume stops."
        )))
        return report
    else:
        report.steps.append(f"Resuming the task {task!r}.")

    # messages: the conversation the model knows the task by.
    messages = data.get("messages")
    if not isinstance(messages, list) or not messages:
        start = task if isinstance(task, str) else None
        if start is None:
            report.problems.append(Problem("messages", (
                "there are no messages and no task: nothing to start the model from."
            )))
            return report
        report.problems.append(Problem("messages", (
            "there are no messages, so the model starts the task from nothing: a brand-new task "
            "from zero, while every side effect of the tool calls already made remains (see the "
            "ledger: they run again)."
        )))
        messages = [{"role": "user", "content": start}]
        report.steps.append("No messages: started a new conversation from the task alone.")
        if isinstance(data.get("pendingToolUse"), dict):
            report.steps.append("Dropped pendingToolUse: a new conversation has no call to answer.")
        data["pendingToolUse"] = None
    else:
        report.steps.append(f"messages: {plural(len(messages), 'message')}, "
                            f"{plural(_tool_results(messages), 'tool result')} recorded.")
    turns_run = _tool_results(messages)

    # turns: where the turn counter carries on from.
    turns = data.get("turns")
    if not isinstance(turns, int) or isinstance(turns, bool):
        turns = 0
        late = f" {plural(turns_run, 'turn')} late" if turns_run else " late"
        report.problems.append(Problem("turns", (
            f"there is no turn count, so it restarts at 0 although {plural(turns_run, 'turn')} "
            f"already ran: the max-turn cap of {max_turns} fires{late}."
        )))
    elif turns != turns_run and "messages" in data:
        report.problems.append(Problem("turns", (
            f"turns says {turns}, but messages record {plural(turns_run, 'tool result')}: "
            "the counter and "
            "the conversation disagree, so the max-turn cap fires at the wrong turn."
        )))
    else:
        report.steps.append(f"turns: {plural(turns, 'turn')} ran; counting on from there "
                            f"(the cap is {max_turns}).")

    # tokensUsed: what compaction is judged against.
    tokens = data.get("tokensUsed")
    if not isinstance(tokens, int) or isinstance(tokens, bool):
        tokens = 0
        report.problems.append(Problem("tokensUsed", (
            "there is no token count, so it restarts at 0: the compaction threshold "
            f"({compaction_threshold:,} tokens) is judged against the tokens spent since resuming "
            "only, and compaction runs late or never. Re-estimating would need the usage of every "
            "past response, which is no longer there."
        )))
    else:
        report.steps.append(f"tokensUsed: {tokens:,} tokens so far "
                            f"(compaction at {compaction_threshold:,}).")

    # pendingToolUse: was a tool call in flight?
    dangling = _dangling_tool_use(messages)
    pending = data.get("pendingToolUse")
    if "pendingToolUse" not in data or pending is None:
        if dangling is not None:
            what = "is missing" if "pendingToolUse" not in data else "is null"
            report.problems.append(Problem("pendingToolUse", (
                f"pendingToolUse {what}, yet the last message names {_describe_call(dangling)} "
                "with no result: a tool call was in flight when the process died, and resume "
                "does not see it, so it cannot reconcile it."
            )))
        elif "pendingToolUse" not in data:
            report.problems.append(Problem("pendingToolUse", (
                "there is no pendingToolUse, so resume cannot tell whether a tool call was in "
                "flight when the process died; it assumes none was."
            )))
        else:
            report.steps.append("pendingToolUse: null, no tool call was in flight.")
    elif not isinstance(pending, dict) or not {"id", "name", "input"} <= set(pending):
        report.problems.append(Problem("pendingToolUse", (
            f"pendingToolUse is {json.dumps(pending)}, not a record {{id, name, input}}: resume "
            "cannot tell which call was in flight."
        )))
        return _finish(report, messages, turns)
    elif dangling is None or dangling.get("id") != pending["id"]:
        report.problems.append(Problem("pendingToolUse", (
            f"pendingToolUse names {_describe_call(pending)}, but the last message does not: "
            "the record and the conversation disagree."
        )))
        return _finish(report, messages, turns)

    call_model = sc.model()
    execute_tool = sc.executor()
    state = {
        "version": data["version"],
        "task": task,
        "turns": turns,
        "tokensUsed": tokens,
        "messages": messages,
        "pendingToolUse": pending if isinstance(pending, dict) else None,
    }
    report.state = state

    def run_tool(call: dict) -> bool:
        try:
            result = execute_tool(call["name"], call["input"])
        except FakeLLMError as err:
            report.problems.append(Problem("pendingToolUse", f"the tool refused the call: {err}"))
            return False
        report.ledger.append((call["name"], copy.deepcopy(call["input"])))
        messages.append({
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": call["id"], "content": result}],
        })
        state["turns"] += 1
        state["pendingToolUse"] = None
        return True

    if state["pendingToolUse"] is not None:
        report.steps.append(
            f"pendingToolUse: {_describe_call(pending)} was in flight when the process died. "
            "Whether it finished is for the course's next lesson to reconcile; this routine runs "
            "it again."
        )
        if not run_tool(pending):
            return _finish(report, messages, state["turns"])

    while True:
        if state["turns"] >= max_turns:
            report.capped_at_turn = state["turns"]
            real = _tool_results(messages)
            note = "" if real == state["turns"] else f" (but {plural(real, 'turn')} really ran)"
            report.steps.append(
                f"The max-turn cap stopped the loop at turn {state['turns']}{note}.")
            break
        if report.compaction_at_turn is None and state["tokensUsed"] >= compaction_threshold:
            report.compaction_at_turn = state["turns"]
            report.steps.append(
                f"tokensUsed reached {state['tokensUsed']:,} (threshold "
                f"{compaction_threshold:,}): compaction would run here, at turn {state['turns']}."
            )
        try:
            response = call_model(tools=sc.tools, messages=messages)
        except ConversationError as err:
            field_name = "pendingToolUse" if err.rule == "tool_result_missing" else "messages"
            report.problems.append(Problem(field_name, (
                f"the model refused the resumed conversation: {err.problem} "
                f"Expected: {err.expected}"
            )))
            break
        state["tokensUsed"] += response["usage"]["output_tokens"]
        if response["stop_reason"] != "tool_use":
            report.finished = True
            report.steps.append(
                f"The model gave its final answer after turn {state['turns']}: task finished.")
            break
        messages.append({"role": "assistant", "content": response["content"]})
        block = next(b for b in response["content"] if b["type"] == "tool_use")
        report.steps.append(f"Turn {state['turns'] + 1}: the model named {_describe_call(block)}; "
                            "resume ran it.")
        if not run_tool({"id": block["id"], "name": block["name"], "input": block["input"]}):
            break
    return _finish(report, messages, state["turns"])


def _finish(report: ResumeReport, messages: list, turns: int) -> ResumeReport:
    report.turns_run = _tool_results(messages)
    report.turns_counted = turns
    return report
