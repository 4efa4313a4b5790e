"""The lesson's ipywidgets views: the crash timeline and the quizzes.

Each view only puts on screen what a tested function computes (`graders.teaching.timeline`,
`graders.teaching.quiz`); where no widget frontend exists it shows a plain-text fallback.
Stable CSS classes, for the browser tests:

- ``cl-timeline`` the timeline's container; ``cl-crash-point`` the slider of where the process
  dies; ``cl-save-points`` the "B only" / "A and B" toggle; ``cl-write-mode`` the "in place" /
  "temp + rename" toggle; ``cl-disk-view`` what is on disk ("no trace", "torn JSON", or the
  checkpoint); ``cl-resume-view`` what resume concludes; ``cl-timeline-strip`` the row of moments,
  one ``cl-moment-button`` each (a click moves the crash there; ``cl-moment-current`` marks it).
- ``cl-quiz`` one question; ``cl-quiz-choices`` its answers, one box (``label``) each with its
  own radio button; ``cl-quiz-feedback`` the feedback.

The stylesheet they share is `graders.teaching.style`; each view carries it.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import TYPE_CHECKING

import ipywidgets as widgets

from graders.teaching._fallback import TextFallback
from graders.teaching.checkpoint_view import CheckpointView
from graders.teaching.quiz import Quiz
from graders.teaching.quizzes import KNOWLEDGE_CHECK, QUIZZES
from graders.teaching.style import INK, KIND_COLOURS, style_widget
from graders.teaching.variants import SAVE_POINTS, WRITE_MODES

if TYPE_CHECKING:  # the timeline pulls in the crash harness: only the timeline view needs it
    from graders.teaching.timeline import Timeline, TimelineState

__all__ = [
    "QuizView",
    "KnowledgeCheck",
    "TimelineView",
    "show_quiz",
    "show_knowledge_check",
    "show_timeline",
    "disk_html",
    "resume_html",
    "state_html",
    "StripCell",
    "strip_cells",
    "no_save_note",
    "answer_in_code",
]


def answer_in_code(quiz: Quiz | None = None) -> str:
    """How to answer a quiz where its buttons cannot show (the fallback names no answer)."""
    if quiz is None:
        return ("Answer in code, one question at a time: from graders.teaching.quiz import check;"
                " from graders.teaching.quizzes import QUIZZES; then check(QUIZZES[\"<id>\"], "
                "LETTER). It says whether that answer is right, and why.")
    letters = ", ".join(f'"{letter}"' for letter in quiz.letters)
    return (f"Answer in code: check(QUIZZES[{quiz.id!r}], LETTER), with LETTER one of {letters} "
            "(from graders.teaching.quiz import check; from graders.teaching.quizzes import "
            "QUIZZES). It says whether that answer is right, and why.")


class QuizView(TextFallback, widgets.VBox):
    """One question: pick an answer, read why it is right or wrong, try again."""

    def __init__(self, quiz: Quiz, **kwargs) -> None:
        self.quiz = quiz
        source = (f'<div class="cl-muted" style="font-size:85%">{html.escape(quiz.source)}</div>'
                  if quiz.source else "")
        self.question = widgets.HTML(f"<b>{html.escape(quiz.question)}</b>{source}")
        self.choices = widgets.RadioButtons(
            options=[(f"({letter}) {c.text}", i)
                     for i, (letter, c) in enumerate(zip(quiz.letters, quiz.choices,
                                                         strict=True))],
            index=None,
            layout=widgets.Layout(width="100%"),
        )
        self.choices.add_class("cl-quiz-choices")
        self.feedback = widgets.HTML("<em>Choose an answer.</em>")
        self.feedback.add_class("cl-quiz-feedback")
        self.first_answer_correct: bool | None = None
        self.choices.observe(self._on_choice, names="index")
        super().__init__([style_widget(), self.question, self.choices, self.feedback], **kwargs)
        self.add_class("cl-quiz")
        self.add_class(f"cl-quiz-{quiz.id.replace('_', '-')}")

    def _on_choice(self, change) -> None:
        index = change["new"]
        if index is None:
            return
        feedback = self.quiz.answer(index)
        if self.first_answer_correct is None:
            self.first_answer_correct = feedback.correct
        self.feedback.value = feedback.to_html()

    def choose(self, answer: int | str) -> None:
        """Pick an answer (an index, a letter or its text), as a click would."""
        self.choices.index = self.quiz.index_of(answer)

    rerun_hint = "Run this cell to see the quiz (its buttons need the running kernel)."

    def fallback_text(self) -> str:
        return f"{self.quiz.to_text(reveal=False)}\n\n{answer_in_code(self.quiz)}"


class KnowledgeCheck(TextFallback, widgets.VBox):
    """Several questions in a row, with a count of those answered right at the first try."""

    def __init__(self, quiz_ids=KNOWLEDGE_CHECK, **kwargs) -> None:
        self.views = [QuizView(QUIZZES[q]) for q in quiz_ids]
        self.score = widgets.HTML()
        self.score.add_class("cl-quiz-score")
        for view in self.views:
            view.choices.observe(lambda _change: self._update(), names="index")
        self._update()
        children = []
        for number, view in enumerate(self.views, 1):
            children += [widgets.HTML(f"<h4>Question {number}</h4>"), view]
        super().__init__([style_widget(), *children, self.score], **kwargs)
        self.add_class("cl-knowledge-check")

    def _update(self) -> None:
        answered = [v for v in self.views if v.first_answer_correct is not None]
        right = sum(1 for v in answered if v.first_answer_correct)
        self.score.value = (f"<b>Right at the first try: {right} of {len(answered)} answered "
                            f"({len(self.views)} questions).</b>")

    rerun_hint = ("Run this cell to see the knowledge check (its buttons need the running "
                  "kernel).")

    def fallback_text(self) -> str:
        questions = [f"Question {n} ({v.quiz.id}). {v.quiz.to_text(reveal=False)}"
                     for n, v in enumerate(self.views, 1)]
        return "\n\n".join([*questions, answer_in_code()])


def disk_html(state: TimelineState) -> str:
    """The disk view of one timeline state: the headline, then the checkpoint or the torn bytes."""
    disk = state.disk
    slug = disk.kind.replace(" ", "-").lower()
    # what the view shows it for: a test (or a script) can tell an updated view from a stale one
    shown_for = html.escape(f"{state.save_points}|{state.write_mode}|{state.point}", quote=True)
    parts = [f'<div class="cl-disk" data-disk="{slug}" data-state="{shown_for}">',
             f'<p><b>On disk:</b> <span class="cl-disk-headline">{html.escape(disk.headline)}'
             "</span></p>"]
    if disk.checkpoint is not None:
        parts.append(CheckpointView(disk.checkpoint, highlight=disk.highlight,
                                    notes=disk.notes)._repr_html_())
    elif disk.text is not None:
        tail = disk.text[-160:]
        parts.append('<p>The last bytes of the file, where the write was cut off:</p>'
                     f'<pre style="white-space:pre-wrap">...{html.escape(tail)}'
                     '<span style="background:#f97066">&#9608; cut here</span></pre>')
    parts.append("</div>")
    return "".join(parts)


def resume_html(state: TimelineState) -> str:
    """What resume concludes from that disk, in one paragraph."""
    return f"<p><b>What resume concludes:</b> {html.escape(state.conclusion)}</p>"


def state_html(state: TimelineState, moments: int) -> str:
    """Everything one redraw shows: the moment, the loop, the disk view, resume's conclusion.

    ``data-moment`` (1-based) and ``data-state`` on the outer element say what it was drawn for.
    """
    note = no_save_note(state)
    shown_for = html.escape(f"{state.save_points}|{state.write_mode}|{state.point}", quote=True)
    return (f'<div class="cl-state" data-moment="{state.moment.index + 1}" '
            f'data-state="{shown_for}">'
            f'<p><span class="cl-moment">Moment {state.moment.index + 1} of {moments}: '
            f"<b>{html.escape(state.moment.label)}</b></span></p>"
            f'<p class="cl-loop">Loop: <b>{html.escape(state.variant)}</b>; harness crash point '
            f"<code>{html.escape(state.point)}</code>.{' ' + html.escape(note) if note else ''}"
            f'</p><div class="cl-disk-view">{disk_html(state)}</div>'
            f'<div class="cl-resume-view">{resume_html(state)}</div></div>')


def _strip_label(moment) -> str:
    if moment.kind == "save":
        return f"save {moment.phase}{moment.k}"
    if moment.kind == "model_call":
        return f"model {moment.k}"
    if moment.kind == "tool":
        return f"tool {moment.k}"
    return "end"


@dataclass(frozen=True)
class StripCell:
    """One moment in the strip: what it says, its colour, and whether it is the one on screen."""

    index: int
    text: str
    title: str
    kind: str
    colour: str
    current: bool
    saves_here: bool


def strip_cells(timeline: Timeline, index: int, save_points: str, write_mode: str
                ) -> list[StripCell]:
    """The strip's moments for one loop, coloured by what a crash there leaves (its outcome)."""
    cells = []
    for moment in timeline.moments:
        state = timeline.state(moment, save_points, write_mode)
        kind = state.outcome
        title = f"{moment.index + 1}. {moment.label}: {kind}"
        if not state.saves_here:
            title += " (this loop does not save here)"
        cells.append(StripCell(moment.index, f"{moment.index + 1}. {_strip_label(moment)}",
                               title, kind, KIND_COLOURS[kind], moment.index == index,
                               state.saves_here))
    return cells


def no_save_note(state: TimelineState) -> str:
    """What a loop does instead of saving at a save point it skips ("" where it saves)."""
    if state.saves_here:
        return ""
    then = "run the tool" if state.moment.phase == "A" else "call the model"
    return f"This loop does not save at this moment: it goes straight on to {then}."


#: What each colour of the strip means, as a tooltip on its legend entry.
_LEGEND_TITLES = {"no trace": "no checkpoint.json, or none that names the call in flight",
                  "torn JSON": "checkpoint.json cut off: resume cannot parse it",
                  "finished tool reruns": "a readable checkpoint, but resume runs a tool again "
                                          "that had already finished",
                  "checkpoint": "a readable checkpoint resume can carry on from"}


def _legend_html() -> str:
    spans = "".join(f'<span style="background:{c};color:{INK}" '
                    f'title="{html.escape(_LEGEND_TITLES.get(k, k))}">{html.escape(k)}</span> '
                    for k, c in KIND_COLOURS.items())
    return (f'<div class="cl-legend" style="font-size:80%">What a crash leaves: {spans}'
            "(striped: this loop does not save there). Click a moment, or use the slider.</div>")


class TimelineView(TextFallback, widgets.VBox):
    """The crash timeline: where the process dies, which loop, and what is then on disk."""

    rerun_hint = "Run this cell to see the crash timeline (it needs the running kernel)."

    def __init__(self, timeline: Timeline, *, moment: int | str = "tool_2",
                 save_points: str = "B only", write_mode: str = "in place", **kwargs) -> None:
        self.timeline = timeline
        start = timeline.moment(moment)
        self.crash_point = widgets.SelectionSlider(
            options=[(f"{m.index + 1}. {m.label}", m.index) for m in timeline.moments],
            value=start.index, description="Dies at:", continuous_update=True,
            readout=False, layout=widgets.Layout(width="95%"),
        )
        self.crash_point.add_class("cl-crash-point")
        self.moment_label = widgets.HTML()
        self.save_points = widgets.ToggleButtons(options=list(SAVE_POINTS), value=save_points,
                                                 description="Save points:")
        self.save_points.add_class("cl-save-points")
        self.write_mode = widgets.ToggleButtons(options=list(WRITE_MODES), value=write_mode,
                                                description="Write mode:")
        self.write_mode.add_class("cl-write-mode")
        self.moment_buttons = []
        for m in timeline.moments:
            button = widgets.Button(layout=widgets.Layout(flex="1 1 0", width="auto"))
            button.add_class("cl-moment-button")
            button.on_click(lambda _button, index=m.index: self.select(index))
            self.moment_buttons.append(button)
        row = widgets.HBox(self.moment_buttons)
        row.add_class("cl-strip-row")
        self.strip = widgets.VBox([row, widgets.HTML(_legend_html())])
        self.strip.add_class("cl-timeline-strip")
        # The moment, the loop, the disk and resume's conclusion are one widget, so one redraw
        # writes them together: the page never shows one moment's disk under another's label.
        self.state_view = widgets.HTML()
        self.state_view.add_class("cl-state-view")
        for control in (self.crash_point, self.save_points, self.write_mode):
            control.observe(lambda _change: self.refresh(), names="value")
        self.refresh()
        title = widgets.HTML(
            f"<b>Crash timeline of {html.escape(timeline.scenario)}</b>: every moment of a real "
            "run. Pick which loop runs and where the process dies; the view below is what the "
            "crash harness found on disk.")
        super().__init__([style_widget(), title, self.save_points, self.write_mode, self.strip,
                          self.crash_point, self.state_view], **kwargs)
        self.add_class("cl-timeline")

    @property
    def current(self) -> TimelineState:
        """The state on screen."""
        return self.timeline.state(self.crash_point.value, self.save_points.value,
                                   self.write_mode.value)

    def select(self, moment: int | str) -> None:
        """Move the crash to ``moment`` (an index or an id), as a click on the strip does."""
        self.crash_point.value = self.timeline.moment(moment).index

    def refresh(self) -> None:
        """Redraw the views from the toggles (called on every change)."""
        state = self.current
        for cell, button in zip(strip_cells(self.timeline, state.moment.index,
                                            state.save_points, state.write_mode),
                                self.moment_buttons, strict=True):
            button.description = cell.text
            button.tooltip = cell.title
            button.style.button_color = cell.colour
            for cls, on in (("cl-moment-current", cell.current),
                            ("cl-moment-nosave", not cell.saves_here)):
                if on and cls not in button._dom_classes:
                    button.add_class(cls)
                elif not on and cls in button._dom_classes:
                    button.remove_class(cls)
        self.state_view.value = state_html(state, len(self.timeline.moments))

    def fallback_text(self) -> str:
        return (self.timeline.to_text() + "\n\n" + self.current.to_text()
                + "\n\n(The interactive timeline needs JupyterLab with ipywidgets; here is its "
                "table and the state it opens on. timeline.state(moment, save_points, "
                "write_mode).to_text() shows any other.)")


def show_quiz(quiz_id: str) -> QuizView:
    """The quiz question ``quiz_id`` (a key of `QUIZZES`), ready to display."""
    return QuizView(QUIZZES[quiz_id])


def show_knowledge_check(quiz_ids=KNOWLEDGE_CHECK) -> KnowledgeCheck:
    """The knowledge check: the source's question first, then the others."""
    return KnowledgeCheck(quiz_ids)


def show_timeline(timeline: Timeline | None = None, **kwargs) -> TimelineView:
    """The crash timeline of ``support-tickets`` (built with `build_timeline` if not given)."""
    if timeline is None:
        from graders.teaching.timeline import build_timeline

        timeline = build_timeline()
    return TimelineView(timeline, **kwargs)
