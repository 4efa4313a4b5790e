"""Opt-in hints for the exercises: the next hint for the first check that does not pass yet.

Hints are authored once per exercise, as package data beside the graders (the file its record
names, ``graders/data/hints/<notebook>.md``: a ``## <check id>`` section per check, and in it
``### Nudge``, ``### Idea`` and ``### Code``), so an installed wheel has them too. An exercise
notebook sets up ``hint = Hints("02_two_latent_failures", globals())``; the student calls
``hint()`` when stuck. It shows the hint the student is at for the first visible check that fails
(or for the check named: ``hint("l2_save_point_a")``), the nudge the first time; only
``hint(next=True)`` opens the next one. So a ``hint()`` left in a cell and run again (Run All,
a restarted kernel) shows the same hint and opens nothing.

How many hints were opened is recorded in the notebook, not graded: each hint's output carries
``{"checkpoint_lab": {"hints": {...}}}`` in its metadata with the running counts, and
`graders.hint_counts` keeps the highest count per check in the notebook's own metadata
(``checkpoint_lab.hints``) when the notebook is saved and reads them back for the
instructor. A new kernel starts from the counts saved in its notebook (``__session__``, the
notebook's path, which Jupyter gives the kernel).
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from graders.checks.base import EXERCISES, load
from graders.hint_counts import METADATA_KEY, hints_opened, record_hints

# METADATA_KEY, hints_opened and record_hints live in graders.hint_counts; the path an
# instructor's script may have from earlier releases still works.
__all__ = [
    "Hint",
    "Hints",
    "HintError",
    "LEVELS",
    "hint_texts",
    "METADATA_KEY",
    "hints_opened",
    "record_hints",
]

#: The kinds of hint, in the order they are opened.
LEVELS = ("Nudge", "Idea", "Code")


class HintError(ValueError):
    """A notebook or check with no hints, or a hints file that does not parse."""


def hint_texts(notebook: str) -> dict[str, list[tuple[str, str]]]:
    """The hints authored for ``notebook`` (its record's hints file in ``graders/data/hints/``):
    {check id: [(level, Markdown text), ...]}."""
    load()
    record = EXERCISES.get(notebook)
    try:
        if record is None or not record.hints:
            raise FileNotFoundError(notebook)
        text = (resources.files("graders") / "data" / "hints" / record.hints).read_text(
            encoding="utf-8")
    except FileNotFoundError:
        with_hints = [name for name, e in EXERCISES.items() if e.hints]
        raise HintError(f"there are no hints for {notebook!r}: the exercises with hints are "
                        f"{', '.join(with_hints)}") from None
    hints: dict[str, list[tuple[str, str]]] = {}
    for section in re.split(r"^## ", text, flags=re.M)[1:]:
        check_id, _, body = section.partition("\n")
        levels = re.split(r"^### (.+)$", body, flags=re.M)[1:]
        pairs = [(levels[i].strip(), levels[i + 1].strip()) for i in range(0, len(levels), 2)]
        if [level for level, _ in pairs] != list(LEVELS):
            raise HintError(f"{notebook}.md, section {check_id.strip()}: the hints must be "
                            f"{', '.join(LEVELS)}, in that order")
        hints[check_id.strip()] = pairs
    return hints


@dataclass(frozen=True)
class Hint:
    """One hint as the student sees it, with the counts recorded in its output's metadata."""

    notebook: str
    check_id: str | None
    number: int
    level: str
    text: str
    opened: dict[str, int]

    @property
    def metadata(self) -> dict[str, Any]:
        """What the hint's output carries in its metadata: the counts so far."""
        return {METADATA_KEY: {"hints": {"notebook": self.notebook, "opened": dict(self.opened),
                                         "total": sum(self.opened.values())}}}

    def heading(self) -> str:
        if self.check_id is None:
            return "No hint needed"
        return (f"Hint {self.number} of {len(LEVELS)} for {_shown(self.check_id)} "
                f"({self.level.lower()})")

    def to_text(self) -> str:
        return f"{self.heading()}\n\n{self.text}"

    __str__ = to_text

    def _repr_markdown_(self) -> str:
        return f"**{html.escape(self.heading())}**\n\n{self.text}"

    def _repr_mimebundle_(self, include=None, exclude=None):
        return ({"text/plain": self.to_text(), "text/markdown": self._repr_markdown_()},
                self.metadata)


class Hints:
    """``hint()`` for one exercise notebook: the next hint for its first failing visible check.

    ``namespace`` is the notebook's ``globals()``: the checks run on the names defined there,
    exactly as the check cells do.
    """

    def __init__(self, notebook: str, namespace: dict) -> None:
        self.notebook = notebook
        self.namespace = namespace
        self.texts = hint_texts(notebook)
        self.opened: dict[str, int] = _saved_counts(namespace.get("__session__"))

    def first_failing(self) -> str | None:
        """The id of the first visible check that does not pass now, or None."""
        from graders.checks import checks_for, evaluate_check

        for check in checks_for(self.notebook, include_hidden=False):
            if check.id in self.texts and not evaluate_check(check.id, self.namespace).passed:
                return check.id
        return None

    def __call__(self, check_id: str | None = None, *, next: bool = False) -> Hint:
        """The hint the student is at for ``check_id`` (or the first visible check that fails):
        the nudge the first time, the same hint when run again; ``next=True`` opens the next."""
        from graders.checks import in_grading_kernel

        if in_grading_kernel():
            return self._note("Hints are not shown while your work is graded.")
        if check_id is None:
            check_id = self.first_failing()
            if check_id is None:
                return self._note(
                    "Every visible check passes: nothing to hint at. The hidden checks run the "
                    "same crash tests on a longer task when your work is graded, and the written "
                    "answer is yours to write.")
        else:
            check_id = _id_of(check_id)
        if check_id not in self.texts:
            raise HintError(f"there are no hints for {check_id!r}; this notebook's checks with "
                            f"hints are {', '.join(_shown(c) for c in self.texts)}")
        seen = self.opened.get(check_id, 0)
        number = min(seen + 1, len(LEVELS)) if next or not seen else seen
        self.opened[check_id] = max(seen, number)
        text = self.texts[check_id][number - 1][1]
        if number == len(LEVELS):
            text += ("\n\n*That was the last hint for this check. Once you have tried it, the "
                     "solutions explain each line.*")
        else:
            text += (f"\n\n*Running this cell again shows this hint again. The next one (hint "
                     f"{number + 1} of {len(LEVELS)}, the {LEVELS[number].lower()}): "
                     f"`hint(next=True)`.*")
        return Hint(self.notebook, check_id, number, LEVELS[number - 1], text, dict(self.opened))

    def _note(self, text: str) -> Hint:
        return Hint(self.notebook, None, 0, "", text, self.opened)


def _id_of(name: str) -> str:
    """The id of the check a student named by its label (or id); ``name`` if none has it."""
    from graders.checks.base import check_named

    try:
        return check_named(name).id
    except KeyError:
        return name


def _shown(check_id: str) -> str:
    """What a student reads for check ``check_id``: its label, else its id."""
    from graders.checks.base import CHECKS

    check = CHECKS.get(check_id)
    return check.shown_id if check is not None else check_id


def _saved_counts(notebook_path: Any) -> dict[str, int]:
    """The hint counts saved in the notebook at ``notebook_path`` ({} when there are none)."""
    if not isinstance(notebook_path, str) or not notebook_path.endswith(".ipynb"):
        return {}
    try:
        nb = json.loads(Path(notebook_path).read_text(encoding="utf-8"))
        return dict(hints_opened(nb))
    except (OSError, ValueError, TypeError, AttributeError):
        return {}
