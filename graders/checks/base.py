"""The registry of exercises: one `Exercise` record per exercise notebook, and its `Check` s.

Each exercise's module under ``graders/checks/`` (``incomplete_checkpoint``,
``two_latent_failures``, ``power_cut``, ``parallel_tool_calls``; named as the exercise, without
its number) builds its record and calls :func:`register`; `EXERCISE_MODULES` lists those modules,
and that is the only wiring. Grading, the
live self-check, counting, the table, ``dev check``, Gradescope and the tests read the record
(:func:`exercise`, :func:`exercise_of`, ``EXERCISES``, ``CHECKS``); nothing dispatches on an
exercise's name. The listed modules are imported once, the first time the registry is read
(:func:`load`), all or nothing, so every exercise is registered whichever part of the package is
imported first, and a registry with some exercises missing is never served.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "AnswerCell", "Check", "Exercise", "EXERCISES", "CHECKS", "NOTEBOOKS", "ANSWER_CELLS",
    "HINT_LINE", "GRADING_ENV", "register", "load", "exercise", "exercise_of", "checks_for",
    "every_failure_counts", "RegistryView", "check_named",
]

#: Said after a failed crash matrix: the fix is in the opt-in hints, never in the message.
HINT_LINE = "Stuck? hint() in your notebook shows one hint at a time."

#: Set to "1" in a grading kernel's environment: run_check then runs nothing (see run_check).
GRADING_ENV = "CHECKPOINT_LAB_GRADING"


@dataclass(frozen=True)
class AnswerCell:
    """An autograded answer cell: its ``grade_id``, and the top-level name its code must define
    (``save_checkpoint``, ``run_agent``, ``MISSING_FIELDS``)."""

    grade_id: str
    defines: str


@dataclass(frozen=True, kw_only=True)
class Check:
    """One autograded check: the ``grade_id`` of its test cell, and what it checks.

    Attributes:
        id: the check id, also the ``grade_id`` of its test cell.
        notebook: the exercise notebook it belongs to (without ``.ipynb``).
        title: what it checks, in a few words.
        points: the points it is worth.
        hidden: whether it runs only at grading time.
        description: what it does, for the student (shown when a hidden check is met).
        answer_cells: the grade_ids of the answer cells whose code it runs.
        scenario: the ``fake_llm`` scenario it runs on, if any.
        kinds: the crash point kinds it judges (``no_crash`` always counts too), if any.
        success: what a pass means, in words.
        problems: the judge's problems it judges as its own (``Verdict.evidence["problems"]``);
            empty when it judges every problem of its crash points.
        twin: for a hidden check, the visible check it repeats on a longer scenario.
        label: what a student reads for it before grading (the check cell's ``run_check``, the
            self-check's table, hints), where its id would name the fix; "" reads the id. The
            id stays the gradebook's key (see `shown_id`).
    """

    id: str
    notebook: str
    title: str
    points: int
    hidden: bool
    description: str
    answer_cells: tuple[str, ...]
    scenario: str | None = None
    kinds: tuple[str, ...] = ()
    success: str = ""
    problems: frozenset[str] = frozenset()
    twin: str = ""
    label: str = ""

    @property
    def shown_id(self) -> str:
        """The name a student reads for this check: its ``label``, else its id."""
        return self.label or self.id


def every_failure_counts(check: Check, verdict) -> bool:
    """The default of `Exercise.counts_against`: every failed verdict fails the check."""
    return True


@dataclass(frozen=True)
class Exercise:
    """Everything the grader knows of one exercise notebook, registered by its own module.

    Attributes:
        notebook: its name in every folder (``02_two_latent_failures``: ``exercises/src/``,
            ``solutions/``, ``tests/fixtures/``, ``graders/data/hints/``), without ``.ipynb``.
        title: what a student reads (``Level 2: two latent failures``); "Level n" is only a title.
        answer_cells: its autograded answer cells, in the order their code is joined.
        checks: its checks, in notebook order.
        grade: ``grade(cells, checks, timeout, fallback)``: the student's `AnswerCells` on
            ``checks`` (timeout in seconds or None; ``fallback``: a self-check may use the best
            observer this machine has) -> check id -> `CheckResult`. Never raises for a bad
            submission; raises ``SandboxUnavailable`` where its checks cannot run.
        live: ``live(check, namespace)``: one visible check on the names a kernel defined ->
            `CheckResult` (raises ``LookupError`` when a name it needs is not defined yet).
        program: ``program(cells)`` -> (the `Submission` its checks run, None) or (None, why it
            cannot run): its cells joined with the code the grader adds (the lesson's loop, a
            given save).
        counts_against: ``counts_against(check, verdict)``: whether a failed verdict fails
            ``check`` (each check judges its own crash points or problems).
        rules: the judge's rules its crash states are held to (``checker(observation, scenario,
            point) -> Verdict``, e.g. `graders.judge.parallel_rules.check`); None: the judge's
            own, `graders.judge.checkpoint_rules.check`.
        fixture_cell: the answer cell a fixture file of ``tests/fixtures/<notebook>/`` stands
            for; None when a fixture is a whole submission (every answer cell).
        gate: the grade_id of the cell its checks' findings wait for (a written answer, or
            Level 3's predictions), read from the saved notebook (`graders.checks.gate`).
        hints: its hints file in ``graders/data/hints/`` ("" when it has none).
    """

    notebook: str
    title: str
    answer_cells: tuple[AnswerCell, ...]
    checks: tuple[Check, ...]
    grade: Callable[..., dict]
    live: Callable[[Check, dict], Any]
    program: Callable[[Any], tuple[Any, str | None]]
    counts_against: Callable[[Check, Any], bool] = every_failure_counts
    rules: Callable[..., Any] | None = None
    fixture_cell: str | None = None
    gate: str | None = None
    hints: str = ""

    @property
    def grade_ids(self) -> tuple[str, ...]:
        """The grade_ids of its answer cells, in order."""
        return tuple(cell.grade_id for cell in self.answer_cells)

    def answer_cell(self, grade_id: str) -> AnswerCell:
        """Its answer cell ``grade_id``."""
        return next(cell for cell in self.answer_cells if cell.grade_id == grade_id)


#: Every exercise by notebook name, in notebook order (filled by :func:`register`).
EXERCISES: dict[str, Exercise] = {}
#: Every check by id, in notebook order (filled by :func:`register`).
CHECKS: dict[str, Check] = {}

#: The modules of ``graders.checks`` that each make and register one exercise's record, in
#: notebook order. Adding an exercise adds its module here (``dev check`` refuses exercise files
#: that no record names).
EXERCISE_MODULES: tuple[str, ...] = (
    "graders.checks.incomplete_checkpoint",
    "graders.checks.two_latent_failures",
    "graders.checks.power_cut",
    "graders.checks.parallel_tool_calls",
)

_loaded: list[bool] = []
_loading: list[bool] = []


class RegistryError(ImportError):
    """An exercise's module could not be imported: the registry holds no exercise at all."""


def load() -> None:
    """Import every module of `EXERCISE_MODULES` once; each registers its exercise. All or
    nothing: when one import fails, the registry is emptied and `RegistryError` names the module,
    and the next call tries again."""
    if _loaded or _loading:
        return
    _loading.append(True)
    try:
        for name in EXERCISE_MODULES:
            try:
                importlib.import_module(name)
            except Exception as error:
                raise RegistryError(
                    f"the exercise module {name} could not be imported ({type(error).__name__}: "
                    f"{error}); no exercise is registered until it imports") from error
    except RegistryError:
        EXERCISES.clear()
        CHECKS.clear()
        for name in EXERCISE_MODULES:
            sys.modules.pop(name, None)
        raise
    finally:
        _loading.clear()
    _loaded.append(True)


def register(record: Exercise) -> Exercise:
    """Add ``record`` (an exercise's module, once, at import) to ``EXERCISES`` and its checks to
    ``CHECKS``, both kept in notebook order; returns it."""
    problems = _record_problems(record)
    if problems:
        raise ValueError(f"exercise {record.notebook!r}: " + "; ".join(problems))
    EXERCISES[record.notebook] = record
    ordered = sorted(EXERCISES.values(), key=lambda e: e.notebook)
    EXERCISES.clear()
    EXERCISES.update((e.notebook, e) for e in ordered)
    CHECKS.clear()
    CHECKS.update((c.id, c) for e in ordered for c in e.checks)
    return record


def _record_problems(record: Exercise) -> list[str]:
    problems = []
    if record.notebook in EXERCISES:
        problems.append("registered twice")
    known = {n for e in EXERCISES.values() for c in e.checks for n in {c.id, c.shown_id}}
    ids = [c.id for c in record.checks]
    labels = [c.label for c in record.checks if c.label]
    problems += [f"label {n!r} is another check's id or label" for n in labels
                 if n in known or n in ids or labels.count(n) > 1]
    problems += [f"check {i!r} is registered twice" for i in ids
                 if i in known or ids.count(i) > 1]
    for check in record.checks:
        if check.notebook != record.notebook:
            problems.append(f"check {check.id} names the notebook {check.notebook!r}")
        unknown = set(check.answer_cells) - set(record.grade_ids)
        if unknown:
            problems.append(f"check {check.id} runs no answer cell of its exercise: "
                            f"{', '.join(sorted(unknown))}")
        if check.twin and check.twin not in ids:
            problems.append(f"check {check.id}'s twin {check.twin} is not one of its checks")
    if record.fixture_cell and record.fixture_cell not in record.grade_ids:
        problems.append(f"fixture_cell {record.fixture_cell} is not one of its answer cells")
    return problems


def exercise(notebook: str) -> Exercise:
    """The exercise ``notebook`` (without ``.ipynb``); ValueError when there is none."""
    load()
    if notebook not in EXERCISES:
        raise ValueError(f"unknown exercise notebook {notebook!r}; one of {sorted(EXERCISES)}")
    return EXERCISES[notebook]


def exercise_of(check: Check | str) -> Exercise:
    """The exercise check ``check`` (a `Check` or its id) belongs to."""
    load()
    return EXERCISES[(CHECKS[check] if isinstance(check, str) else check).notebook]


def check_named(name: str) -> Check:
    """The check whose id or label is ``name``; KeyError when there is none (a notebook of an
    earlier release names its checks by id, a later one by label)."""
    load()
    if name in CHECKS:
        return CHECKS[name]
    for check in CHECKS.values():
        if check.label == name:
            return check
    raise KeyError(f"unknown check {name!r}; one of {sorted(c.shown_id for c in CHECKS.values())}")


def checks_for(notebook: str, *, include_hidden: bool = True) -> list[Check]:
    """The checks of ``notebook`` (without ``.ipynb``), in the order they appear in it."""
    load()
    record = EXERCISES.get(notebook)
    return [c for c in (record.checks if record else ()) if include_hidden or not c.hidden]


class RegistryView(Mapping):
    """A read-only view of the registry: notebook -> ``read(record)``, for every exercise whose
    record ``keep`` accepts (all by default); always as the registry is now."""

    def __init__(self, read: Callable[[Exercise], Any],
                 keep: Callable[[Exercise], bool] = lambda record: True) -> None:
        self._read = read
        self._keep = keep

    def _records(self) -> dict[str, Exercise]:
        load()
        return {name: record for name, record in EXERCISES.items() if self._keep(record)}

    def __getitem__(self, notebook: str) -> Any:
        return self._read(self._records()[notebook])

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._records()))

    def __len__(self) -> int:
        return len(self._records())

    def __repr__(self) -> str:
        return repr(dict(self))


#: The exercise notebooks (without ``.ipynb``) and each one's title (a view of ``EXERCISES``).
NOTEBOOKS: Mapping[str, str] = RegistryView(lambda e: e.title)
#: The grade_ids of each notebook's answer cells, in order (a view of ``EXERCISES``).
ANSWER_CELLS: Mapping[str, tuple[str, ...]] = RegistryView(lambda e: e.grade_ids)
