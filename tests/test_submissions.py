"""Every fixture submission gets the verdicts its name promises; each message names its mistake."""

from __future__ import annotations

from pathlib import Path

import pytest

from graders.notebook import Harness, Submission

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "02_two_latent_failures"
SCENARIOS = ("support-tickets", "long-migration")

pytestmark = pytest.mark.skipif(not hasattr(__import__("os"), "fork"),
                                reason="the crash harness needs fork")

#: fixture -> (problem codes its failures may carry, the phrase its first failure must say,
#:             kinds of crash point that must fail)
WRONG = {
    "starter": ({"in_place_write", "no_save_point_a"},
                          "nothing on disk covered the window",
                          {"torn_write", "killed_during_tool"}),
    "no_save_point_a": ({"no_save_point_a"}, "nothing on disk covered the window",
                        {"killed_during_tool"}),
    "in_place_write": ({"in_place_write"}, "a torn write", {"torn_write"}),
    "copy_over": ({"copy_over"}, "copies it over checkpoint.json", {"torn_write"}),
    "temp_never_renamed": ({"never_renamed"}, "a temp file that never becomes checkpoint.json",
                           {"no_crash", "killed_during_tool"}),
    "save_point_a_after_tool": ({"save_point_a_after_tool"}, "after the tool had returned",
                                {"killed_during_tool"}),
    "pending_never_reset": ({"pending_never_reset"}, "never reset to None",
                            {"no_crash", "killed_during_model_call"}),
    "pending_without_input": ({"pending_without_input"}, "has no input",
                              {"killed_during_tool"}),
    "delete_then_rename": ({"deleted_before_rename"}, "deleted checkpoint.json before renaming",
                           {"killed_before_rename"}),
}
RIGHT = ["passes_all", "passes_namedtemporaryfile", "passes_path_replace", "passes_fsync",
         "passes_os_write"]


def test_every_fixture_is_accounted_for_and_says_what_it_gets_wrong():
    names = {p.stem for p in FIXTURES.glob("*.py")}
    ours = set(WRONG) | set(RIGHT)
    assert ours <= names
    for name in ours:
        source = (FIXTURES / f"{name}.py").read_text()
        docstring = source.split('"""')[1]
        assert docstring and "\n" not in docstring, f"{name}: one-line docstring"
        assert "def save_checkpoint(" in source and "def run_agent(" in source


@pytest.fixture(scope="module")
def matrices():
    """name -> scenario -> verdicts, computed once (one runner per fixture)."""
    cache: dict[str, dict[str, list]] = {}

    def get(name: str, scenarios=SCENARIOS):
        if name not in cache:
            with Harness(Submission.from_file(FIXTURES / f"{name}.py")) as harness:
                cache[name] = {sc: harness.run_matrix(sc) for sc in scenarios}
        return cache[name]

    return get


@pytest.mark.parametrize("name", sorted(WRONG))
def test_each_wrong_fixture_fails_and_names_its_own_mistake(matrices, name):
    problems, phrase, kinds = WRONG[name]
    for scenario, verdicts in matrices(name).items():
        failed = [v for v in verdicts if not v.passed]
        assert failed, f"{name} passed everything on {scenario}"
        failing_kinds = {v.kind for v in failed}
        assert kinds <= failing_kinds, (name, scenario, failing_kinds)
        codes = {v.evidence["problem"] for v in failed}
        assert codes <= problems, (name, scenario, codes)
        assert any(phrase in v.message for v in failed), (name, [v.message for v in failed])
        for v in failed:
            assert v.message.startswith(("Killed ", "Ran with no crash")), v.message
            assert "Traceback" not in v.message


def test_the_starter_fails_torn_writes_and_the_tool_window_each_with_its_own_message(matrices):
    verdicts = matrices("starter")["support-tickets"]
    by_point = {v.point: v for v in verdicts}
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


def test_the_first_save_of_delete_then_rename_has_nothing_to_lose(matrices):
    verdicts = {v.point: v for v in matrices("delete_then_rename")["support-tickets"]}
    assert verdicts["killed_before_rename_save_1"].passed
    assert not verdicts["killed_before_rename_save_2"].passed


@pytest.mark.parametrize("name", RIGHT)
def test_each_correct_variant_passes_everything(matrices, name):
    for scenario, verdicts in matrices(name).items():
        failed = [str(v) for v in verdicts if not v.passed]
        assert not failed, f"{name} on {scenario}:\n" + "\n".join(failed)
        assert len(verdicts) > 10


def test_python_is_parsed_one_thread_at_a_time(monkeypatch):
    """CPython 3.11's ast.parse shares a recursion counter between threads: two parses at once
    failed a correct submission in a batch with "SystemError: AST constructor recursion depth
    mismatch" (every check 0, as a grader fault). Grading parses in several threads."""
    import ast
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
