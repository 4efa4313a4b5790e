"""STYLE.md's glossary holds in the code: a word it turns away is not used for that thing.

Each entry of ``TURNED_AWAY`` is a word from the glossary's "not" column and the places that speak
of the thing the word would misname: the code that makes it, the tests and benchmarks that watch
it, and the paragraphs of README.md and DEVELOPERS.md that describe it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import ROOT

#: word -> (files or folders that must not use it, what a README/DEVELOPERS paragraph names when
#: it speaks of the thing). "snapshot": the hand-ins' copy of a grading batch, and a reading of
#: checkpoint.json (issue 31); "leftovers" are a crash's files, never grading's residue, and
#: "residue" never a crash's files.
TURNED_AWAY = {
    "snapshot": (["graders", "fake_llm", "benchmarks", "tests/test_grade_killed.py",
                  "tests/test_grade_durable.py", "tests/test_grade_never_loses.py",
                  "tests/test_cli_grade.py", "tests/test_disk_model.py", "tests/test_recorder.py",
                  "tests/test_harness.py", "tests/test_parallel_rules.py",
                  "tests/test_sandbox.py", "tests/test_browser.py"],
                 ["grading_batch", "copies", "hand-in", "nbgrader_plumbing", "readings",
                  "sandbox/session"]),
    "leftovers": (["graders/sandbox/sweep.py", "graders/sandbox/uid_tier.py",
                   "graders/sandbox/uid_closing.py", "graders/sandbox/uid_walls.py",
                   "graders/recording/run_folders.py", "graders/workspace/scratch.py",
                   "graders/cli/grade.py", "tests/test_run_folders.py",
                   "tests/test_uid_closing.py"],
                  ["sweep", "residue", "run folder"]),
    "residue": (["graders/judge", "graders/recording/leftovers.py", "graders/loop/restart.py",
                 "graders/sandbox/_bootstrap.py", "tests/test_leftovers.py",
                 "tests/test_extra_runs.py"],
                ["restart", "leftovers"]),
    "checker": (["graders/judge"], ["judge"]),
    "engine": (["graders/grading"], ["grading layer", "graders/grading"]),
}


def glossary() -> dict[str, set[str]]:
    """STYLE.md's glossary: each word with the words it turns away (its "not" column)."""
    rows = {}
    for line in (ROOT / "STYLE.md").read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| ") and len(cells) == 3 and cells[0] not in ("word", "---"):
            rows[cells[0]] = set(re.findall(r'"([^"]+)"', cells[2]))
    return rows


def _files(where: str) -> list[Path]:
    path = ROOT / where
    return sorted(path.rglob("*.py")) if path.is_dir() else [path]


def _paragraphs(text: str) -> list[str]:
    """Paragraphs, list items and table rows of a Markdown text, each on its own."""
    return re.split(r"\n\s*\n|\n(?=\s*(?:\d+\.|-|\|)\s)", text)


def test_the_glossary_names_the_hand_ins_copy_and_turns_snapshot_away():
    rows = glossary()
    assert "snapshot" in rows["the hand-ins' copy"], rows.get("the hand-ins' copy")
    assert "snapshot" in rows["checkpoint"]
    assert "snapshot" in rows["reading"]


def test_the_glossary_keeps_a_crash_s_leftovers_apart_from_grading_s_residue():
    rows = glossary()
    assert "residue" in rows["leftovers"] and "leftovers" in rows["residue"]
    for word in TURNED_AWAY:
        assert any(word in away for away in rows.values()), \
            f"STYLE.md's glossary turns {word!r} away nowhere: keep TURNED_AWAY in step with it"


@pytest.mark.parametrize("word", sorted(TURNED_AWAY))
def test_code_that_owns_a_thing_calls_it_by_the_glossary_word(word):
    homes, _ = TURNED_AWAY[word]
    found = []
    for where in homes:
        files = _files(where)
        assert files and all(f.is_file() for f in files), f"{where} is gone: update TURNED_AWAY"
        for path in files:
            if word in path.stem.lower():
                found.append(f"{path.relative_to(ROOT)} (its name)")
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if word in line.lower():
                    found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not found, f"STYLE.md turns {word!r} away here:\n" + "\n".join(found)


def misuses(word: str, text: str, names: list[str]) -> list[str]:
    """The paragraphs of the Markdown ``text`` that speak of ``names`` and use ``word``."""
    return [para.strip()[:160] for para in _paragraphs(text)
            if word in para.lower() and any(name in para.lower() for name in names)]


@pytest.mark.parametrize("word", sorted(TURNED_AWAY))
def test_the_docs_call_a_thing_by_the_glossary_word(word):
    _, names = TURNED_AWAY[word]
    found = [f"{doc}: {para}" for doc in ("README.md", "DEVELOPERS.md")
             for para in misuses(word, (ROOT / doc).read_text(encoding="utf-8"), names)]
    assert not found, f"STYLE.md turns {word!r} away; these paragraphs use it:\n" \
        + "\n".join(found)


def test_the_docs_check_finds_the_old_wording_and_only_where_the_batch_or_a_reading_speaks():
    old = ("1. → `cli/grade`\n"
           "3. → `nbgrader_plumbing/grading_batch` (`snapshot`: the folder copied)\n"
           "13. `sandbox/session` (`snapshots`): the sandboxed run\n"
           "- Claude Code keeps snapshots of your files\n")
    found = misuses("snapshot", old, TURNED_AWAY["snapshot"][1])
    assert len(found) == 2 and "grading_batch" in found[0] and "session" in found[1], found
