"""Lesson 05's view of one turn with several tool calls: every moment of the turn, what
``checkpoint.json`` holds then, and what resume would do if the process were killed there.

The moments come from a real run of Level 4's reference loop
(``solutions/04_parallel_tool_calls.py``) on a ``fake_llm`` scenario with several calls per turn,
in memory: the saves are the states the loop really passed to ``save_checkpoint``. The run is
recorded once into the package (``graders/data/teaching/parallel_turn_events.json``, written by
``python -m graders.teaching.parallel_turn``; a test keeps it equal to a fresh run), because the
student image has no ``solutions/`` folder. Shown as a table (:func:`turn_table`, HTML in
JupyterLab, text elsewhere) or as a slider over the moments (:func:`show_turn`).
"""

from __future__ import annotations

import copy
import html
import importlib.util
import json
from dataclasses import dataclass
from pathlib import Path

import ipywidgets as widgets

from graders.teaching._fallback import TextFallback

__all__ = ["TurnMoment", "RecordedShape", "turn_moments", "turn_table", "show_turn",
           "TurnView"]

_REFERENCE = Path(__file__).resolve().parents[2] / "solutions" / "04_parallel_tool_calls.py"


@dataclass(frozen=True)
class TurnMoment:
    """One moment of a multi-call turn.

    Attributes:
        label: what is happening, e.g. ``"tool 2 (fetch_metrics) runs"``.
        on_disk: what ``checkpoint.json`` holds then, in words.
        resume: what resume would do if the process were killed at this moment.
        checkpoint: the checkpoint on disk then (a dict; None before the first save).
    """

    label: str
    on_disk: str
    resume: str
    checkpoint: dict | None


_EVENTS = Path(__file__).resolve().parents[1] / "data" / "teaching" / "parallel_turn_events.json"

#: The scenarios lesson 05 walks through, recorded into the package.
SHOWN = ("incident-triage", "release-audit")


def _reference_loop():
    spec = importlib.util.spec_from_file_location("level4_reference_view", _REFERENCE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _record(scenario) -> list[tuple[str, object]]:
    """The reference loop's events on ``scenario``, as recorded in the package (else run now)."""
    recorded = json.loads(_EVENTS.read_text(encoding="utf-8")) if _EVENTS.exists() else {}
    if scenario.name in recorded:
        return [(what, value) for what, value in recorded[scenario.name]]
    if not _REFERENCE.exists():
        raise LookupError(f"the turns of {scenario.name} are not recorded in this course's "
                          f"package (it records {', '.join(sorted(recorded))}); pick one of those")
    return record_reference(scenario)


class RecordedShape:
    """What lesson 05 needs of a scenario whose file this copy of the course leaves out (the
    site's wheel carries no scenario that only hidden checks use): its tool turns, read from the
    recorded run's last save (every assistant message's ``tool_use`` blocks, in order)."""

    def __init__(self, name: str) -> None:
        self.name = name
        recorded = json.loads(_EVENTS.read_text(encoding="utf-8")) if _EVENTS.exists() else {}
        if name not in recorded:
            raise LookupError(f"there is no scenario {name} in this copy of the course, and its "
                              f"turns are not recorded (recorded: {', '.join(sorted(recorded))})")
        events = recorded[name]
        last = [value for what, value in events if what == "save"][-1]
        self.turns = [[{"id": b["id"], "name": b["name"], "input": b.get("input")}
                       for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_use"]
                      for m in last["messages"] if m["role"] == "assistant"]

    @property
    def turn_count(self) -> int:
        return len(self.turns) + 1  # the tool turns, then the answer

    @property
    def tool_calls(self) -> list[dict]:
        return [call for turn in self.turns for call in turn]

    def turn_calls(self, turn: int) -> list[dict]:
        return self.turns[turn - 1] if 1 <= turn <= len(self.turns) else []


def _scenario(name: str):
    """The scenario ``name``, or its recorded shape where its file is not in this copy."""
    from fake_llm import load_scenario
    from fake_llm.scenario import ScenarioError

    try:
        return load_scenario(name)
    except ScenarioError:
        return RecordedShape(name)


def write_events(scenarios: tuple[str, ...] = SHOWN) -> None:
    """Record the reference loop's events on ``scenarios`` into the package's data."""
    from fake_llm import load_scenario

    events = {name: record_reference(load_scenario(name)) for name in scenarios}
    _EVENTS.parent.mkdir(parents=True, exist_ok=True)
    _EVENTS.write_text(json.dumps(events, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def record_reference(scenario) -> list[tuple[str, object]]:
    """The reference loop's events on ``scenario``: ("model", k), ("save", state), ("tool", k)."""
    module = _reference_loop()
    events: list[tuple[str, object]] = []
    model, tools = scenario.model(), scenario.executor()
    count = {"model": 0, "tool": 0}

    def call_model(**kwargs):
        count["model"] += 1
        events.append(("model", count["model"]))
        return model(**kwargs)

    def execute_tool(name, tool_input):
        count["tool"] += 1
        events.append(("tool", count["tool"]))
        return tools(name, tool_input)

    module.save_checkpoint = lambda state: events.append(("save", copy.deepcopy(state)))
    module.run_agent(scenario.task, scenario.tools, call_model, execute_tool)
    return events


def _disk_words(state: dict | None, numbers: dict[str, int]) -> str:
    if state is None:
        return "nothing: there is no checkpoint.json yet"
    pending = state["pendingToolUse"]
    results = sum(1 for m in state["messages"][1:] if m["role"] == "user")
    head = f"turn {state['turns']}, {results} result message{'s' if results != 1 else ''}"
    if pending is None:
        return f"{head}; pendingToolUse null"
    entries = [f"tool {numbers.get(e['id'], '?')}" + (" with its result" if "result" in e
                                                      else "") for e in pending]
    return f"{head}; pendingToolUse lists " + ", ".join(entries)


def _resume_words(state: dict | None, running: int | None, numbers: dict[str, int]) -> str:
    if state is None:
        return "starts the task over; nothing had run"
    pending = state["pendingToolUse"]
    if pending is None:
        return ("sends messages as they are: every result so far is recorded, nothing runs twice"
                if running is None else
                f"knows nothing of tool {running}, which was running: it would run it again")
    kept = [numbers[e["id"]] for e in pending if "result" in e]
    left = [numbers[e["id"]] for e in pending if "result" not in e]
    parts = []
    if kept:
        parts.append("reuses the result of " + _join(kept))
    if running in left:
        parts.append(f"reconciles tool {running} (it may have had its effect)")
        left = [k for k in left if k != running]
    if left:
        parts.append("runs " + _join(left) + ", which had not started")
    return "; ".join(parts) + "; then one result message and the next model call"


def _join(numbers: list[int]) -> str:
    words = [str(n) for n in numbers]
    if len(words) == 1:
        return f"tool {words[0]}"
    return "tools " + ", ".join(words[:-1]) + " and " + words[-1]


def turn_moments(scenario: str = "incident-triage", turn: int = 1) -> list[TurnMoment]:
    """Every moment of tool turn ``turn`` of ``scenario``, from the model's request for its calls
    to the next model call, with what is on disk and what resume would do there."""
    sc = _scenario(scenario)
    if not 1 <= turn < sc.turn_count:
        raise ValueError(f"{scenario} has tool turns 1 to {sc.turn_count - 1}; got turn {turn}")
    calls = sc.tool_calls
    numbers = {c["id"]: k for k, c in enumerate(calls, 1)}
    names = {k: c["name"] for k, c in enumerate(calls, 1)}
    events = _record(sc)
    disk: dict | None = None
    moments: list[TurnMoment] = []
    inside = False
    saves = 0
    ran: int | None = None  # the tool that ran last, while no save has followed it yet
    for what, value in events:
        if what == "model":
            if inside:
                moments.append(TurnMoment(f"model call {value} (after the turn)",
                                          _disk_words(disk, numbers),
                                          _resume_words(disk, None, numbers), disk))
                break
            if value == turn:
                inside = True
                blocks = len(sc.turn_calls(turn))
                moments.append(TurnMoment(
                    f"model call {value} asks for {blocks} tool{'s' if blocks > 1 else ''}",
                    _disk_words(disk, numbers), _resume_words(disk, None, numbers), disk))
            continue
        if what == "save":
            before, disk = disk, value
            saves += 1
            if inside:
                pending = disk["pendingToolUse"]
                if pending is None:
                    if ran is not None:  # the last tool's result is not saved before B
                        moments.append(TurnMoment(
                            f"tool {ran} returned, its result in memory only (save point B "
                            "being written)", moments[-1].on_disk,
                            _resume_words(before, ran, numbers), before))
                    label = "after save point B: one result message, pendingToolUse null"
                elif not any("result" in e for e in pending):
                    label = "after save point A: every call listed"
                else:
                    done = max(numbers[e["id"]] for e in pending if "result" in e)
                    label = f"after a save: tool {done}'s result kept"
                moments.append(TurnMoment(label, _disk_words(disk, numbers),
                                          _resume_words(disk, None, numbers), disk))
            ran = None
            continue
        if inside:
            ran = value
            moments.append(TurnMoment(f"tool {value} ({names[value]}) runs",
                                      _disk_words(disk, numbers),
                                      _resume_words(disk, value, numbers), disk))
    return moments


class _Shown:
    def __init__(self, text: str, markup: str) -> None:
        self.text, self.markup = text, markup

    def __repr__(self) -> str:
        return self.text

    def _repr_html_(self) -> str:
        return self.markup


def turn_table(scenario: str = "incident-triage", turn: int = 1):
    """The turn's moments as a table: HTML in JupyterLab, text elsewhere."""
    moments = turn_moments(scenario, turn)
    lines = [f"One turn with several tool calls ({scenario}, turn {turn}):"]
    rows = []
    for m in moments:
        lines.append(f"- {m.label}\n    on disk: {m.on_disk}\n    killed here, resume "
                     f"{m.resume}")
        rows.append(f"<tr><th scope='row'>{html.escape(m.label)}</th>"
                    f"<td>{html.escape(m.on_disk)}</td><td>{html.escape(m.resume)}</td></tr>")
    markup = ("<table class='cl-parallel-turn'><caption>One turn with several tool calls "
              f"({html.escape(scenario)}, turn {turn})</caption><thead><tr>"
              "<th scope='col'>moment</th><th scope='col'>checkpoint.json holds</th>"
              "<th scope='col'>killed here, resume</th></tr></thead><tbody>"
              + "".join(rows) + "</tbody></table>")
    return _Shown("\n".join(lines), markup)


def _pending_html(state: dict | None) -> str:
    if state is None:
        return ""
    pending = state["pendingToolUse"]
    shown = None if pending is None else [
        {**{k: e[k] for k in ("id", "name", "input")},
         **({"result": e["result"][:40] + ("..." if len(e["result"]) > 40 else "")}
            if "result" in e else {})} for e in pending]
    return ("<pre style='white-space:pre-wrap'>\"pendingToolUse\": "
            f"{html.escape(json.dumps(shown, indent=2))}</pre>")


def show_turn(scenario: str = "incident-triage", turn: int = 1) -> TurnView:
    """A slider over the turn's moments: the checkpoint's pendingToolUse and resume's plan."""
    return TurnView(turn_moments(scenario, turn), scenario, turn)


class TurnView(TextFallback, widgets.VBox):
    """The widget :func:`show_turn` returns: a slider over the moments, and a pane with what
    ``checkpoint.json`` holds then and what resume would do (text where there is no frontend)."""

    def __init__(self, moments: list[TurnMoment], scenario: str, turn: int) -> None:
        self.moments, self.scenario, self.turn = moments, scenario, turn
        # No readout beside the slider: a long label was cut off there. The pane below names
        # the moment in full.
        self.slider = widgets.SelectionSlider(
            options=[(f"{i + 1}. {m.label}", i) for i, m in enumerate(moments)], value=0,
            description="Moment:", continuous_update=True, readout=False,
            layout=widgets.Layout(width="95%"), style={"description_width": "initial"})
        self.pane = widgets.HTML()
        self.slider.observe(lambda change: self.render(), names="value")
        title = widgets.HTML(f"<b>One turn with several tool calls</b> "
                             f"({html.escape(scenario)}, turn {turn})")
        super().__init__([title, self.slider, self.pane])
        self.add_class("cl-parallel-turn")
        self.render()

    def render(self) -> None:
        """Show the moment the slider is on."""
        m = self.moments[self.slider.value]
        where = f"Moment {self.slider.value + 1} of {len(self.moments)}: "
        self.pane.value = (f"<p>{where}<b>{html.escape(m.label)}</b></p>"
                           f"<p>On disk: {html.escape(m.on_disk)}.</p>"
                           + _pending_html(m.checkpoint)
                           + f"<p><b>Killed here, resume</b> {html.escape(m.resume)}.</p>")

    def fallback_text(self) -> str:
        return repr(turn_table(self.scenario, self.turn))


if __name__ == "__main__":
    write_events()
