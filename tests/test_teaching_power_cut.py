"""Level 3's puzzle: four saves, a table to fill before anything is shown, and outcomes that are
what Level 3's own checks find."""

from __future__ import annotations

import ast

import pytest

from graders.checks.gate import NOTEBOOK_ENV, SHOW_ALL_ENV
from graders.sandbox import sandbox_problem
from graders.teaching.power_cut import (
    COLUMNS,
    KNOWN_OUTCOMES,
    LEVEL3_SAVES,
    compare_saves,
    save_outcomes,
    save_steps,
    show_saves,
)
from tests.conftest import ROOT
from tests.test_gate import save_with_answer

FILLED = {name: {"empty": True, "older": True} for name in LEVEL3_SAVES}


@pytest.mark.parametrize("table", [
    None, {}, {name: {"empty": None, "older": None} for name in LEVEL3_SAVES},
    {**FILLED, "save 3": {"empty": True}}, {**FILLED, "save 4": {"empty": "yes", "older": 1}},
])
def test_nothing_is_shown_until_every_cell_holds_true_or_false(table):
    shown = compare_saves(table)
    text = repr(shown)
    assert text.startswith("Fill in every cell first") and shown._repr_html_() is None
    for outcome in KNOWN_OUTCOMES.values():
        assert outcome.empty_at not in text or not outcome.empty_at
        assert "really" not in text


@pytest.mark.sandbox
def test_a_filled_table_is_shown_beside_what_power_cuts_leave():
    shown = compare_saves(FILLED)
    text = repr(shown)
    right = sum(getattr(o, c) for o in KNOWN_OUTCOMES.values() for c in COLUMNS)
    assert text.startswith(f"You predicted {right} of 8 cells right.")
    assert text.count("<- not what you predicted") == 8 - right
    assert "<table class='cl-level3-saves'>" in shown._repr_html_()


def test_no_save_of_the_four_survives_every_power_cut_and_none_is_the_fix():
    assert set(LEVEL3_SAVES) == {"save 1", "save 2", "save 3", "save 4"}
    assert all(o.empty or o.older for o in KNOWN_OUTCOMES.values())
    assert {(o.empty, o.older) for o in KNOWN_OUTCOMES.values()} == {
        (True, True), (False, True)}, "the answers differ from save to save"


@pytest.fixture
def in_a_folder(tmp_path, monkeypatch):
    """A kernel's cwd: ``tmp_path``, where the saved notebook is looked for; no override."""
    for name in (SHOW_ALL_ENV, NOTEBOOK_ENV, "JPY_SESSION_NAME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


#: What would say which sync calls the saves make (issue 30, G4; tests/test_routes.py's words).
SYNC_CALLS = ("fsync", "fdatasync", "o_directory", "f_fullfsync", "os.open", "fileno")


@pytest.mark.parametrize("saved", ["none", "untouched"])
def test_before_the_predictions_the_saves_are_steps_in_words_and_no_call(in_a_folder, saved):
    if saved == "untouched":
        (in_a_folder / "03_power_cut.ipynb").write_text(
            (ROOT / "exercises" / "03_power_cut.ipynb").read_text())
    shown = show_saves({"__session__": str(in_a_folder / "03_power_cut.ipynb")})
    for text in (repr(shown), shown._repr_html_()):
        said = text.lower()
        assert not [w for w in SYNC_CALLS if w in said], text
        assert "def save_checkpoint" not in text
        assert all(name in text for name in LEVEL3_SAVES), "four saves, each named"
        assert "sync the folder" in text and "sync the file" in text, "what each syncs, in words"
    assert "once all eight predictions in PREDICTED are filled in" in repr(shown)
    assert len(repr(shown).splitlines()) <= 8


@pytest.mark.parametrize("opened_by", ["predictions", "show_all"])
def test_once_the_predictions_are_saved_the_saves_show_their_code(in_a_folder, monkeypatch,
                                                                  opened_by):
    if opened_by == "predictions":
        save_with_answer("03_power_cut", in_a_folder)
    else:
        monkeypatch.setenv(SHOW_ALL_ENV, "1")
    shown = show_saves()
    assert all(f"# ---- {name}: then ----" in shown._repr_html_() for name in LEVEL3_SAVES)
    assert repr(shown).count("def save_checkpoint") == 1, "the lines all four share, once"
    assert "os.fsync(folder)" in repr(shown) and "os.fsync(f.fileno())" in repr(shown)


#: The steps' words for the calls the saves make, and the calls that only open or close the
#: folder (no step of their own).
_CALL_WORDS = {"dump": "write the state", "flush": "flush", "replace": "rename"}


def _steps_from_the_code(code: str) -> list[str]:
    """The steps of one save read off its syntax tree, an independent reading of `save_steps`'s
    line table: each call in order, the ``with`` block's end closing the file."""
    body = next(n for n in ast.parse(code).body if isinstance(n, ast.FunctionDef)).body[2:]

    def walk(statements):
        for node in statements:
            if isinstance(node, ast.With):
                yield from walk(node.body)
                yield "close the file"
                continue
            call = node.value if isinstance(node, ast.Expr | ast.Assign) else None
            name = call.func.attr if isinstance(call, ast.Call) else ""
            if name == "fsync":
                synced = ast.unparse(call.args[0])
                yield "sync the folder" if synced == "folder" else "sync the file"
            elif name in _CALL_WORDS:
                yield _CALL_WORDS[name]

    return list(walk(body))


@pytest.mark.parametrize("name", LEVEL3_SAVES)
def test_the_steps_in_words_follow_each_saves_code(name):
    assert save_steps(LEVEL3_SAVES[name]) == _steps_from_the_code(LEVEL3_SAVES[name])


@pytest.mark.skipif(bool(sandbox_problem()), reason=str(sandbox_problem()))
@pytest.mark.sandbox
def test_the_known_outcomes_are_what_level_3s_checks_find():
    assert save_outcomes() == KNOWN_OUTCOMES


def test_no_two_saves_shown_together_are_the_answer():
    """Issue 30, G4: a save that keeps every save and another that is never empty would, put
    together, be Level 3's answer; the table holds no save that keeps every save."""
    assert not any(o.older is False for o in KNOWN_OUTCOMES.values())
    for name, code in LEVEL3_SAVES.items():
        lines = [line.strip() for line in code.splitlines()]
        rename = lines.index("os.replace(tmp_path, CHECKPOINT)")
        assert "os.fsync(folder)" not in lines[rename:], f"{name} syncs the folder after its rename"
