"""One save, one step at a time: what a power cut at each step could leave on disk.

Lesson 04's stepper (:func:`show_power_steps`). One of the lesson's four saves
(:data:`graders.teaching.power_cut.SAVES`) runs once with the lesson's loop, recorded as grading
records it; the save made before tool 2 is cut into its steps (the write, each fsync, the
rename, then tool 2 running), and at each the engine that grades Level 3
(:func:`graders.judge.power.power_moments`) lists every state a power cut there could leave.
Nothing is written by hand: a save that lacks a step simply has fewer steps.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

import ipywidgets as widgets

from graders.teaching._fallback import TextFallback

__all__ = ["PowerStep", "power_steps", "show_power_steps", "PowerStepsView"]

#: The save the steps are taken from: save point A of turn 2, the save just before tool 2.
_SAVE = 3

_OP_WORDS = {
    "write": "before the write: the new bytes are still in the program",
    "rename": "before the rename: the new file is written, under its temp name",
}


@dataclass
class PowerStep:
    """One step of the save: where the power fails, and what ``checkpoint.json`` could be."""

    label: str
    states: list[str]
    ok: bool


def _label(moment, rename_at: int | None) -> str:
    if moment.how == "call":
        return "tool 2 runs: the save has returned"
    if moment.op.call in ("fsync", "fdatasync"):
        after = rename_at is not None and moment.position > rename_at
        return f"before the fsync of {'the folder' if after else 'the temp file'}"
    return _OP_WORDS.get(moment.op.call, f"before {moment.op.call}")


def _state_words(state, new: str | None) -> str:
    from graders.teaching.power_cut import _words

    if state.kind == "file" and state.cause is None and state.data is not None:
        whole = "the new save" if state.data.decode(errors="replace") == new else \
            "the previous save"
        return f"{whole}, complete"
    return _words(state, None)


def power_steps(save: str = "both", scenario: str = "support-tickets") -> list[PowerStep]:
    """The steps of the save before tool 2 in ``save`` (a key of ``SAVES``), each with the
    states a power cut there could leave, from one recorded run."""
    return _all_steps((save,), scenario)[save]


def _all_steps(saves, scenario: str) -> dict[str, list[PowerStep]]:
    """:func:`power_steps` of each of ``saves``, their runs recorded side by side."""
    from fake_llm import load_scenario
    from graders.teaching.power_cut import _LOOP, SAVES, _records

    sc = load_scenario(scenario)
    recorded = _records([SAVES[save] + _LOOP for save in saves], sc)
    return {save: _steps_of(run, sc) for save, run in zip(saves, recorded, strict=True)}


def _steps_of(recorded, sc) -> list[PowerStep]:
    from graders.judge.checkpoint_rules import check
    from graders.judge.matrix import build_matrix
    from graders.judge.power import judge_power_states

    matrix = build_matrix(recorded, sc)
    wanted = {f"torn_write_save_{_SAVE}", f"killed_before_rename_save_{_SAVE}",
              "killed_during_tool_2"}
    picked = [(m, pm) for pm in matrix.points if pm.point.id in wanted for m in pm.moments
              if m.how in ("before", "call")]
    picked.sort(key=lambda pair: pair[0].position)
    new = next((pm.point.after for _, pm in picked if pm.point.after is not None), None)
    rename_at = next((m.position for m, _ in picked if m.op is not None
                      and m.op.call == "rename"), None)
    steps = []
    for moment, pm in picked:
        judged = judge_power_states(matrix, pm, sc, check, moment)
        words = list(dict.fromkeys(_state_words(s, new) for s, _ in judged))
        steps.append(PowerStep(_label(moment, rename_at), words,
                               all(passed for _, passed in judged)))
    return steps


def _text(save: str, steps: list[PowerStep]) -> str:
    lines = [f"The save before tool 2, fsync of {save}: a power cut at each step"]
    lines += [f"{i}. {s.label}: {'; '.join(s.states)}"
              + ("" if s.ok else " (resume cannot rely on it)")
              for i, s in enumerate(steps, 1)]
    return "\n".join(lines)


def show_power_steps(save: str = "both") -> PowerStepsView:
    """A slider over the steps of one save, and a choice of the four saves."""
    from graders.teaching.power_cut import SAVES

    return PowerStepsView(_all_steps(tuple(SAVES), "support-tickets"), save)


class PowerStepsView(TextFallback, widgets.VBox):
    """The widget :func:`show_power_steps` returns (text where there is no frontend)."""

    def __init__(self, steps: dict[str, list[PowerStep]], save: str) -> None:
        self.steps, self.save = steps, save
        self.choice = widgets.ToggleButtons(options=list(steps), value=save,
                                            description="fsync of:")
        self.slider = widgets.IntSlider(min=1, max=len(steps[save]), value=1,
                                        description="Step:", continuous_update=True)
        self.pane = widgets.HTML()
        self.choice.observe(lambda change: self._pick(), names="value")
        self.slider.observe(lambda change: self.render(), names="value")
        super().__init__([self.choice, self.slider, self.pane])
        self.add_class("cl-power-steps")
        self.render()

    def _pick(self) -> None:
        self.save = self.choice.value
        self.slider.max = len(self.steps[self.save])
        self.slider.value = min(self.slider.value, self.slider.max)
        self.render()

    def render(self) -> None:
        """Show the step the slider is on."""
        steps = self.steps[self.save]
        step = steps[self.slider.value - 1]
        states = "".join(f"<li>{html.escape(s)}</li>" for s in step.states)
        verdict = ("resume copes with every one of them" if step.ok else
                   "resume cannot rely on it")
        self.pane.value = (f"<p>Step {self.slider.value} of {len(steps)}: "
                           f"<b>{html.escape(step.label)}</b></p><p>A power cut here could "
                           f"leave checkpoint.json as:</p><ul>{states}</ul><p>{verdict}</p>")

    def fallback_text(self) -> str:
        return _text(self.save, self.steps[self.save])
