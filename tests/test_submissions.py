"""The fixture submissions: each says what it does and defines what its answer cells must; each of
Level 2's wrong ones fails for its own mistake, and its messages name it.

What each fixture earns, check by check, is its folder's ``expected.json``, graded once by
``checkpoint-lab dev check`` (``tests/test_adversarial.py``); here only what the verdicts say.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from graders.checks import EXERCISES
from graders.cli.dev import truth_of
from graders.notebook import Harness, Submission

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "02_two_latent_failures"
SCENARIO = "support-tickets"

needs_fork = pytest.mark.skipif(not hasattr(__import__("os"), "fork"),
                                reason="the crash harness needs fork")

#: Level 2's wrong fixtures: the judge's problem each failure names, and a phrase of its message.
MISTAKES = {
    "starter": ({"in_place_write", "no_save_point_a"}, "nothing on disk covered the window"),
    "fails_save_point_a_not_saved": ({"no_save_point_a"}, "nothing on disk covered the window"),
    "fails_atomic_in_place_write": ({"in_place_write"}, "a torn write"),
    "fails_atomic_copy_over": ({"copy_over"}, "copies it over checkpoint.json"),
    "fails_all_temp_not_renamed": ({"never_renamed"},
                                   "a temp file that never becomes checkpoint.json"),
    "fails_save_point_a_saved_after_tool": ({"save_point_a_after_tool"},
                                            "after the tool had returned"),
    "fails_save_point_a_pending_not_reset": ({"pending_never_reset"}, "never reset to None"),
    "fails_save_point_a_pending_without_input": ({"pending_without_input"}, "has no input"),
    "fails_atomic_deletes_before_renaming": ({"deleted_before_rename"},
                                             "deleted checkpoint.json before renaming"),
    "fails_atomic_hard_link_then_rename": ({"in_place_write"}, "one file with two names"),
    "fails_atomic_padded_slot": ({"in_place_write"}, "overwriting checkpoint.json in place"),
}

FOLDERS = [(name, path) for name in EXERCISES
           for path in sorted((ROOT / "tests" / "fixtures" / name).glob("*.py"))]


@pytest.mark.parametrize("notebook, path", FOLDERS, ids=[f"{n[:2]}-{p.stem}" for n, p in FOLDERS])
def test_every_fixture_says_what_it_does_and_defines_what_its_cells_must(notebook, path):
    record = EXERCISES[notebook]
    source = path.read_text()
    assert ast.get_docstring(ast.parse(source)), f"{path.name}: a docstring says what it does"
    cells = [record.fixture_cell] if record.fixture_cell else record.grade_ids
    for grade_id in cells:
        name = record.answer_cell(grade_id).defines
        assert f"def {name}(" in source, f"{path.name} defines {name}"
    assert path.stem in truth_of(path.parent), f"{path.name} has a row in expected.json"


def test_every_wrong_level2_fixture_has_its_mistake_named():
    truth = truth_of(FIXTURES)
    wrong = {name for name, row in truth.items() if not all(row.values())}
    assert wrong == set(MISTAKES)


@pytest.fixture(scope="module")
def matrices():
    """name -> verdicts on support-tickets, computed once (one runner per fixture)."""
    cache: dict[str, list] = {}

    def get(name: str) -> list:
        if name not in cache:
            with Harness(Submission.from_file(FIXTURES / f"{name}.py")) as harness:
                cache[name] = harness.run_matrix(SCENARIO)
        return cache[name]

    return get


@needs_fork
@pytest.mark.parametrize("name", sorted(MISTAKES))
def test_each_wrong_fixture_names_its_own_mistake(matrices, name):
    problems, phrase = MISTAKES[name]
    failed = [v for v in matrices(name) if not v.passed]
    assert failed, f"{name} passed everything on {SCENARIO}"
    codes = {v.evidence["problem"] for v in failed}
    assert codes <= problems, (name, codes)
    assert any(phrase in v.message for v in failed), (name, [v.message for v in failed])
    for v in failed:
        assert v.message.startswith(("Killed ", "Ran with no crash")), v.message
        assert "Traceback" not in v.message


@needs_fork
def test_the_starter_fails_torn_writes_and_the_tool_window_each_with_its_own_message(matrices):
    by_point = {v.point: v for v in matrices("starter")}
    torn = by_point["torn_write_save_1"]
    assert not torn.passed
    assert "not valid JSON" in torn.message and "a torn write" in torn.message
    assert f"held {torn.evidence['bytes_on_disk']:,} of its " in torn.message
    tool = by_point["killed_during_tool_2"]
    assert not tool.passed
    assert tool.message.startswith(
        "Killed while tool 2 (build_table) ran: checkpoint.json still held turn 1 and no "
        "pendingToolUse, so this call left no trace: nothing on disk covered the window between "
        "the model naming the tool and its result being recorded (save point A).")
    assert "left no trace" in tool.message and "nothing on disk covered the window" in tool.message
    assert torn.message != tool.message
    assert by_point["no_crash"].passed
    assert "tokensUsed stayed 0" in by_point["no_crash"].message


@needs_fork
def test_the_first_save_of_a_delete_before_renaming_has_nothing_to_lose(matrices):
    verdicts = {v.point: v for v in matrices("fails_atomic_deletes_before_renaming")}
    assert verdicts["killed_before_rename_save_1"].passed
    assert not verdicts["killed_before_rename_save_2"].passed


def test_python_is_parsed_one_thread_at_a_time(monkeypatch):
    """CPython 3.11's ast.parse shares a recursion counter between threads: two parses at once
    failed a correct submission in a batch with "SystemError: AST constructor recursion depth
    mismatch" (every check 0, as a grader fault). Grading parses in several threads."""
    import concurrent.futures
    import threading
    import time

    import graders.submission as submission

    inside, most = [0], [0]
    lock = threading.Lock()
    real = ast.parse

    def slow_parse(*args, **kwargs):
        with lock:
            inside[0] += 1
            most[0] = max(most[0], inside[0])
        time.sleep(0.01)
        try:
            return real(*args, **kwargs)
        finally:
            with lock:
                inside[0] -= 1

    monkeypatch.setattr(submission.ast, "parse", slow_parse)
    source = (FIXTURES / "passes_all.py").read_text()
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        found = list(pool.map(lambda _: submission.defined_names(source), range(32)))
    assert all("save_checkpoint" in names for names in found)
    assert most[0] == 1, f"{most[0]} threads parsed at once"
