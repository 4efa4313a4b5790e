"""The docs' figures are the course's own (issue 28 item 3): every "N lessons" or "N exercises"
in the docs is the number of notebooks the course ships, and the first-start time the docs give
is the one ``benchmarks/first_start.py`` measured (``docs/first_start.json``)."""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
         "eleven", "twelve"]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "lessons" / "README.md",
        ROOT / "exercises" / "README.md", ROOT / "graders" / "cli" / "site.py"]
_FIGURE = re.compile(r"\b(" + "|".join(WORDS) + r"|\d+) (lesson notebooks|lessons|exercise "
                     r"notebooks|exercises)\b|`(lessons|exercises)/\*\.ipynb` \((\w+) today",
                     re.I)


def counts() -> dict[str, int]:
    return {"lessons": len(list((ROOT / "lessons").glob("*.ipynb"))),
            "exercises": len(list((ROOT / "exercises").glob("*.ipynb")))}


def figures(text: str) -> list[tuple[str, int, str]]:
    """(what, number, the words) for each count of lessons or exercises that ``text`` states."""
    found = []
    for match in _FIGURE.finditer(text):
        word, noun = (match.group(1), match.group(2)) if match.group(1) else (match.group(4),
                                                                              match.group(3))
        number = int(word) if word.isdigit() else WORDS.index(word.lower()) if \
            word.lower() in WORDS else None
        if number is not None:
            found.append(("lessons" if noun.lower().startswith("lesson") else "exercises",
                          number, " ".join(match.group(0).split())))
    return found


def test_the_reader_finds_the_figures_it_must_check():
    text = "the six lesson notebooks, Four exercises, `lessons/*.ipynb` (six today; 12 lessons"
    assert figures(text) == [("lessons", 6, "six lesson notebooks"),
                             ("exercises", 4, "Four exercises"),
                             ("lessons", 6, "`lessons/*.ipynb` (six today"),
                             ("lessons", 12, "12 lessons")]


def test_every_count_of_lessons_and_exercises_in_the_docs_is_the_course_s():
    have = counts()
    assert have["lessons"] >= 1 and have["exercises"] >= 1
    wrong, seen = [], 0
    for doc in DOCS:
        for what, number, words in figures(doc.read_text(encoding="utf-8")):
            seen += 1
            if number != have[what]:
                wrong.append(f"{doc.relative_to(ROOT)}: {words!r}, but the course has "
                             f"{have[what]} {what}")
    assert seen >= 5, "the docs state no counts any more: is the reader still right?"
    assert not wrong, wrong


def _course_py():
    import importlib.util

    spec = importlib.util.spec_from_file_location("course_py", ROOT / "course.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_first_start_time_in_the_docs_is_the_measured_one():
    measured = json.loads((ROOT / "docs" / "first_start.json").read_text(encoding="utf-8"))
    for key in ("seconds_until_jupyterlab_answers", "seconds_until_starting_jupyterlab",
                "pip_cache", "python", "load_average_before"):
        assert key in measured, f"docs/first_start.json has no {key}: run benchmarks/first_start.py"
    assert measured["machine"]["cores"] >= 1 and measured["machine"]["processor"]
    course = _course_py()
    answered = course.minutes_and_seconds(measured["seconds_until_jupyterlab_answers"])
    prepared = course.minutes_and_seconds(measured["seconds_until_starting_jupyterlab"])
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    assert f"answered after {answered}" in readme, answered
    assert f"{prepared} of it making `.venv`" in readme, prepared
    assert prepared in course.first_start()  # what course.py says while it installs
    assert not re.search(r"about a minute|3 min 20 s", readme + course.first_start())


def test_durations_are_written_as_the_docs_write_them():
    course = _course_py()
    assert [course.minutes_and_seconds(s) for s in (45, 59.6, 81, 200)] == [
        "45 s", "1 min 0 s", "1 min 21 s", "3 min 20 s"]
