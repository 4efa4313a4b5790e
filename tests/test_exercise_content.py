"""The authored exercises: their cells, grade_ids, points and code agree with graders.checks.

The last tests execute both exercise notebooks in a real kernel, once as students receive them
(the starter in every answer cell) and once with the reference answers.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import jupytext
import nbformat
import pytest

from graders.checks import ANSWER_CELLS, CHECKS, NOTEBOOKS
from tests.conftest import ROOT, notebook_variant

SRC = ROOT / "exercises" / "src"
AUTHORED = {name: SRC / f"{name}.py" for name in NOTEBOOKS}
#: Points of the manually graded written answers.
MANUAL = {"01_incomplete_checkpoint": {"l1_where_resume_falls_over": 5},
          "02_two_latent_failures": {"l2_name_the_failures": 4},
          "03_power_cut": {"l3_why_two_fsyncs": 3},
          "04_parallel_tool_calls": {"l4_why_keep_results": 3}}
#: Cells the student may edit that are neither answers nor graded: they only try things out.
PLAYGROUND = {"l2_crash_one", "l3_predict_table"}


def cells(name: str) -> list:
    return jupytext.read(AUTHORED[name], fmt="py:percent").cells


def meta(cell) -> dict:
    return cell.metadata.get("nbgrader", {})


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_authored_file_parses_and_every_cell_has_a_unique_grade_id(name):
    ids = [meta(c).get("grade_id") for c in cells(name)]
    assert all(ids), f"{name}: a cell without nbgrader metadata or grade_id"
    assert len(ids) == len(set(ids)), f"{name}: grade_ids used twice: " + str(
        sorted({i for i in ids if ids.count(i) > 1}))
    prefix = f"l{int(name[:2])}_"
    assert all(i.startswith(prefix) for i in ids)
    for cell in cells(name):
        info = meta(cell)
        assert info.get("schema_version") == 3
        if not info.get("solution"):
            assert info.get("locked") or info["grade_id"] in PLAYGROUND, (
                f"{info['grade_id']} is neither an answer nor locked")


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_test_cells_are_exactly_the_checks_with_their_points(name):
    tests = {meta(c)["grade_id"]: meta(c) for c in cells(name)
             if meta(c).get("grade") and not meta(c).get("solution")}
    checks = {c.id: c for c in CHECKS.values() if c.notebook == name}
    assert set(tests) == set(checks)
    for grade_id, info in tests.items():
        assert info["locked"] and info["points"] == checks[grade_id].points, grade_id


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_test_cells_run_their_own_check_and_hidden_ones_say_so(name):
    for cell in cells(name):
        info = meta(cell)
        if not info.get("grade") or info.get("solution"):
            continue
        assert cell.cell_type == "code"
        shown = CHECKS[info["grade_id"]].shown_id  # its label where its id names the fix
        assert f'run_check("{shown}", globals())' in cell.source
        hidden = CHECKS[info["grade_id"]].hidden
        assert cell.source.startswith("# Hidden check:") == hidden, info["grade_id"]


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_answer_and_written_cells(name):
    by_id = {meta(c)["grade_id"]: c for c in cells(name)}
    for grade_id in ANSWER_CELLS[name]:
        cell = by_id[grade_id]
        assert cell.cell_type == "code" and meta(cell)["solution"] and not meta(cell)["grade"]
        lab = cell.metadata["checkpoint_lab"]
        assert {"solution_from", "starter_from"} <= set(lab)
    for grade_id, points in MANUAL[name].items():
        cell = by_id[grade_id]
        info = meta(cell)
        assert cell.cell_type == "markdown" and info["solution"] and info["grade"]
        assert info["points"] == points
        assert re.search(r"### BEGIN SOLUTION\n\*\*Mark scheme\*\*.*### END SOLUTION$",
                         cell.source, re.S), f"{grade_id} needs its mark scheme in the region"
    solutions = {meta(c)["grade_id"] for c in cells(name) if meta(c).get("solution")}
    assert solutions == set(ANSWER_CELLS[name]) | set(MANUAL[name])
    for cell in cells(name):
        if not meta(cell).get("solution"):
            assert "BEGIN SOLUTION" not in cell.source and "END SOLUTION" not in cell.source


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_point_totals(name):
    total = sum(meta(c).get("points", 0) for c in cells(name) if meta(c).get("grade"))
    auto = sum(c.points for c in CHECKS.values() if c.notebook == name)
    assert total == auto + sum(MANUAL[name].values())
    assert total == {"01_incomplete_checkpoint": 10, "02_two_latent_failures": 14,
                     "03_power_cut": 13, "04_parallel_tool_calls": 18}[name]


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_answer_cells_name_code_that_exists(name):
    from graders.nbgrader_plumbing.build import extract_code

    wanted = {"l1_missing_fields_answer": {"MISSING_FIELDS"},
              "l1_save_checkpoint": {"save_checkpoint"},
              "l2_save_checkpoint": {"save_checkpoint"}, "l2_run_agent": {"run_agent"},
              "l3_save_checkpoint": {"save_checkpoint"}, "l4_run_agent": {"run_agent"}}
    given = {"l3_run_agent": "def run_agent", "l4_save_checkpoint": "def save_checkpoint"}
    for cell in cells(name):
        lab = cell.metadata.get("checkpoint_lab")
        if not lab:
            continue
        if "code_from" in lab:
            code = extract_code(lab["code_from"])
            assert given[meta(cell)["grade_id"]] in code, lab["code_from"]
            continue
        for key in ("solution_from", "starter_from"):
            path = lab[key].partition(":")[0]
            assert (ROOT / path).is_file(), f"{lab[key]}: no such file"
            code = extract_code(lab[key])
            tree = ast.parse(code)
            top = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
            top |= {t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets}
            assert wanted[meta(cell)["grade_id"]] <= top, (lab[key], top)
            assert not {"run_agent", "save_checkpoint"} - wanted[meta(cell)["grade_id"]] & top, (
                f"{lab[key]}: each function belongs at the top of its own answer cell")


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_code_cells_compile_and_paths_named_in_the_text_exist(name):
    for cell in cells(name):
        if cell.cell_type == "code":
            compile(cell.source, meta(cell)["grade_id"], "exec")
        for path in re.findall(r"`((?:solutions|exercises|tests)/[\w./]+)`", cell.source):
            assert (ROOT / path).exists(), f"{meta(cell)['grade_id']} names {path}"
        for notebook in re.findall(r"`(\d\d_\w+)\.ipynb`", cell.source):
            assert notebook in NOTEBOOKS
    selfcheck = next(c for c in cells(name) if meta(c)["grade_id"].endswith("_self_check"))
    assert f'self_check(globals(), "{name}")' in selfcheck.source


def test_level1_loop_is_the_lessons_own_loop():
    from graders.teaching.variants import lesson_function

    loop = next(c for c in cells("01_incomplete_checkpoint") if meta(c)["grade_id"] == "l1_loop")
    assert loop.source.strip() == lesson_function("run_agent", save_points="A and B").strip(), (
        "the Level 1 notebook's loop must be the lesson's own loop "
        "(graders.teaching.variants.lesson_function('run_agent'))")
    assert "checkpoint_lab" not in loop.metadata


def _code_lines(text: str) -> set[str]:
    """The lines of ``text`` that say something: stripped, no blank lines, no imports, none made
    of fewer than three words or symbols (``try:``, ``pass``, ``}``)."""
    found = set()
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith(("import ", "from ")):
            continue
        if len(re.findall(r"\w+|[^\w\s]", line)) < 3:
            continue
        found.add(line)
    return found


#: Lines the Level 2 reference shares with the lesson's own loop, which lesson 02 teaches before
#: Level 2 and Level 1 shows: they are how any loop counts tokens and clears pendingToolUse.
_LESSON_LOOP_LINES = {'state["tokensUsed"] += response["usage"]["output_tokens"]',
                      'state["pendingToolUse"] = None'}


def test_no_notebook_before_level_2s_solutions_holds_a_line_of_the_level_2_reference():
    """Issue 18.1: what a student has before Level 2's solutions (every lesson, Levels 1 and 2 as
    released) holds no line of the Level 2 reference that the Level 2 starter lacks."""
    reference = (ROOT / "solutions" / "02_two_latent_failures.py").read_text()
    starter = (ROOT / "tests" / "fixtures" / "02_two_latent_failures" / "starter.py").read_text()
    giveaways = _code_lines(reference) - _code_lines(starter) - _LESSON_LOOP_LINES
    assert len(giveaways) > 20, "the measure sees the reference's fix"
    released = [*sorted((ROOT / "lessons").glob("*.ipynb")),
                ROOT / "exercises" / "01_incomplete_checkpoint.ipynb",
                ROOT / "exercises" / "02_two_latent_failures.ipynb"]
    for path in released:
        nb = nbformat.read(path, as_version=4)
        text = "\n".join(c.source for c in nb.cells)
        shown = sorted(_code_lines(text) & giveaways)
        assert not shown, f"{path.relative_to(ROOT)} shows the Level 2 reference: {shown}"


# -- the notebooks, executed in a real kernel -----------------------------------------------------

def _run(nb, tmp_path: Path):
    from nbclient import NotebookClient

    NotebookClient(nb, timeout=120, kernel_name="python3",
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    return nb


def _text(output) -> str:
    if output.get("output_type") == "stream":
        return output["text"]
    data = output.get("data", {})
    return data.get("text/html") or data.get("text/plain", "")


@pytest.mark.sandbox
@pytest.mark.parametrize("name", NOTEBOOKS)
@pytest.mark.parametrize("variant", ["starter", "reference"])
def test_notebook_runs_top_to_bottom_in_a_kernel(name, variant, tmp_path):
    nb = _run(notebook_variant(name, variant), tmp_path)
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        grade_id = meta(cell).get("grade_id") or cell.id  # a playground cell: its id alone
        errors = [o for o in cell.outputs if o["output_type"] == "error"]
        assert not errors, f"{grade_id}: {errors[0]['ename']}: {errors[0]['evalue']}"
        stderr = [o["text"] for o in cell.outputs
                  if o["output_type"] == "stream" and o["name"] == "stderr"]
        assert not stderr, f"{grade_id} wrote to stderr (nbgrader zeroes a test cell): {stderr}"
        if meta(cell).get("grade") and not CHECKS[grade_id].hidden:
            shown = " ".join(_text(o) for o in cell.outputs)
            want = "PASS" if variant == "reference" else "FAIL"
            assert f"{want} " in shown, f"{grade_id} ({variant}) showed: {shown[:500]}"
            # one table and nothing after it: the points are an execute_result only in
            # Validate's kernel, where nbgrader reads them (issue 30, no stray "0.0")
            results = [o for o in cell.outputs if o["output_type"] == "execute_result"]
            assert not results, f"{grade_id} left {results}"
            assert len(cell.outputs) == 1, f"{grade_id}: {len(cell.outputs)} outputs"
    table = " ".join(_text(o) for c in nb.cells
                     if meta(c).get("grade_id", "").endswith("_self_check")
                     for o in c.outputs)
    checks = [c for c in CHECKS.values() if c.notebook == name and not c.hidden]
    passed = sum(c.points for c in checks) if variant == "reference" else 0
    assert f"of {len(checks)} checks passed, {passed} of {sum(c.points for c in checks)} points" \
        in table, table[-400:]
    assert nbformat.validate(nb) is None


@pytest.mark.nbgrader
@pytest.mark.parametrize("variant", ["starter", "reference"])
def test_nbgrader_validate_tells_a_failing_check_from_a_passing_one(variant, tmp_path):
    """The Validate button is `nbgrader validate`: it must not say Success! on the starter."""
    import subprocess
    import sys

    name = "02_two_latent_failures"
    path = tmp_path / f"{name}.ipynb"
    nbformat.write(notebook_variant(name, variant), path)
    nbgrader = Path(sys.executable).parent / "nbgrader"
    out = subprocess.run([str(nbgrader), "validate", path.name], cwd=tmp_path,
                         capture_output=True, text=True, timeout=300)
    text = out.stdout + out.stderr
    if variant == "reference":
        assert "Success! Your notebook passes all the tests." in text, text[-2000:]
    else:
        assert "Success!" not in text
        for label in ("l2_kill_during_save", "l2_kill_during_tool"):  # the checks' labels
            assert f'run_check("{label}", globals())' in text, text[-2000:]
        # Both fail with 0 points: a failure, never "partial credit" (issue 28).
        assert "VALIDATION FAILED ON 2 CELL(S)" in text, text[-2000:]
        assert "passed some but not all of the tests" not in text


@pytest.mark.nbgrader
def test_stock_validate_tells_a_failing_check_by_the_points_only_its_kernel_gets(tmp_path):
    """Without the course's Validator (no Jupyter config at all), nbgrader's own Validate still
    fails the starter's checks: its kernel (``NBGRADER_EXECUTION=validate``) is the one place a
    check cell returns its points; Run All shows the table alone (issue 30)."""
    import os
    import subprocess
    import sys

    name = "02_two_latent_failures"
    path = tmp_path / f"{name}.ipynb"
    nbformat.write(notebook_variant(name, "starter"), path)
    nbgrader = Path(sys.executable).parent / "nbgrader"
    env = {**os.environ, "JUPYTER_NO_CONFIG": "1"}
    out = subprocess.run([str(nbgrader), "validate", path.name], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=300)
    text = out.stdout + out.stderr
    assert "Success!" not in text
    assert "VALIDATION FAILED ON 2 CELL(S)" in text, text[-2000:]
    assert ": not passed (0/3 points)" not in text, "the course's Validator was not loaded"


def test_the_playground_cells_are_editable_and_ungraded():
    for name in NOTEBOOKS:
        for cell in cells(name):
            info = meta(cell)
            if info["grade_id"] in PLAYGROUND:
                assert not (info["locked"] or info["solution"] or info["grade"]), info


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_the_notebook_offers_hints_and_names_a_check_command_that_works(name):
    text = "\n".join(c.source for c in cells(name))
    assert f'hint = Hints("{name}", globals())' in text
    assert "`hint()`" in text
    # one command that works where the student is: a workspace, a hub home (lesson2/), and the
    # website says it has no terminal (issue 28 item 4; resolve_notebook finds each copy)
    assert f"`checkpoint-lab check {name}`" in text
    words = " ".join(text.split())
    assert "`lesson2/` on a hub" in words and "website has no terminal" in words
    assert f"`checkpoint-lab check {name}.ipynb`" not in text


def test_level2_says_what_is_wanted_not_where_the_failures_are():
    """The Level 2 text before the checks must not name the fixes (issue 10): those are hints."""
    text = ""
    for cell in cells("02_two_latent_failures"):
        if cell.cell_type == "markdown" and not meta(cell).get("solution"):
            text += cell.source + "\n"
        if meta(cell)["grade_id"] == "l2_self_check":
            break
    for giveaway in ("os.replace", "temp file", "atomic save", "save point A", "pendingToolUse\"]",
                     "mkstemp", "in place", "saves only"):
        assert giveaway not in text, f"the Level 2 text gives the fix away: {giveaway!r}"


#: Words that name one of Level 2's fixes: none may be in a Level 2 check's title or description.
_LEVEL2_FIXES = ("atomic", "save point", "temp", "rename", "replace", "pendingtooluse",
                 "in place", "in-place", "fsync", "before the tool")


def test_no_level2_check_title_or_description_names_its_fix():
    """Issue 18.3: the ids stay (the gradebook knows them); what a student reads is neutral."""
    checks = [c for c in CHECKS.values() if c.notebook == "02_two_latent_failures"]
    assert len(checks) == 4
    for check in checks:
        for text in (check.title, check.description):
            named = [w for w in _LEVEL2_FIXES if w in text.lower()]
            assert not named, f"{check.id}: {text!r} names the fix ({named})"
    for cell in cells("02_two_latent_failures"):  # the check cells' comments, above their call
        if meta(cell).get("grade") and not meta(cell).get("solution"):
            comment = "\n".join(line for line in cell.source.lower().splitlines()
                                if line.startswith("#"))
            assert not [w for w in _LEVEL2_FIXES if w in comment], meta(cell)["grade_id"]


def test_level2_asks_for_part_1_before_the_checks_and_holds_them_back_until_it_is_locked_in():
    """Issue 18.2: the student commits to a diagnosis first (the predict() pattern)."""
    ids = [meta(c)["grade_id"] for c in cells("02_two_latent_failures")]
    written = ids.index("l2_name_the_failures")
    assert ids[written + 1] == "l2_lock_part1"
    assert all(written < ids.index(c.id) for c in CHECKS.values()
               if c.notebook == "02_two_latent_failures")
    lock = cells("02_two_latent_failures")[written + 1]
    assert 'lock_answer("l2_name_the_failures")' in lock.source
    part1 = cells("02_two_latent_failures")[ids.index("l2_part1")].source
    assert "model call 3" in part1 and "just before the tool runs" in part1, (
        "part 1 asks about the loop that saves only at A (both halves of goal 2)")


#: Words that say where Level 3's syncs go, or name them: the hints say it, not the notebook.
_LEVEL3_FIXES = ("fsync", "before the rename", "after the rename", "before its rename",
                 "f_fullfsync", "o_directory", "flush")


def test_level3_is_a_puzzle_whose_text_never_says_where_the_syncs_go():
    """Issue 18.4: the notebook states what is wanted and asks for predictions; where the
    syncs go is in hint() only."""
    ids = [meta(c)["grade_id"] for c in cells("03_power_cut")]
    for cell in cells("03_power_cut"):
        info = meta(cell)
        if info["grade_id"] == "l3_written_intro":
            break
        if info.get("solution") and cell.cell_type == "code":
            continue
        text = cell.source.lower() if cell.cell_type == "markdown" else "\n".join(
            line for line in cell.source.lower().splitlines() if line.startswith("#"))
        named = [w for w in _LEVEL3_FIXES if w in text]
        assert not named, f"{info['grade_id']} says where the syncs go: {named}"
    assert ids.index("l3_predict_table") < ids.index("l3_predict_compare") < ids.index(
        "l3_save_checkpoint"), "the prediction comes before the student's own save"
    from graders.checks.hints import hint_texts

    code = "\n".join(text for pairs in hint_texts("03_power_cut").values() for _, text in pairs)
    assert "os.fsync(" in code and "f.flush()" in code, "the syscalls live in the hints"


def test_level3_starts_from_save_1_of_its_table():
    from graders.teaching.power_cut import LEVEL3_SAVES

    starter = (ROOT / "tests" / "fixtures" / "03_power_cut" / "starter.py").read_text()

    def save(text):
        tree = ast.parse(text)
        return ast.dump(next(n for n in tree.body if isinstance(n, ast.FunctionDef)))

    assert save(LEVEL3_SAVES["save 1"]) == save(starter)
    assert "fsync" in starter, "the starter syncs, in the wrong places"


def test_level1_does_not_print_the_six_fields_above_the_question():
    before = []
    for cell in cells("01_incomplete_checkpoint"):
        if meta(cell)["grade_id"] == "l1_missing_fields_answer":
            break
        before.append(cell.source)
    text = "\n".join(before)
    assert not all(f"`{field}`" in text for field in
                   ("version", "task", "turns", "tokensUsed", "pendingToolUse")), (
        "the six fields are listed just above the question that asks for them")


def test_the_walkthrough_shows_the_starter_beside_the_reference_as_they_are():
    from graders.teaching.variants import starter_reference_diff

    text = (ROOT / "solutions" / "02_two_latent_failures.walkthrough.md").read_text()
    blocks = re.findall(r"^```diff\n(.*?)\n```$", text, re.S | re.M)
    assert blocks == [starter_reference_diff("save_checkpoint").rstrip("\n"),
                      starter_reference_diff("run_agent").rstrip("\n")], (
        "solutions/02_two_latent_failures.walkthrough.md is out of date with the starter or the "
        "reference: "
        "regenerate its diff blocks from graders.teaching.variants.starter_reference_diff")
    lessons = "\n".join(p.read_text() for p in (ROOT / "lessons").glob("*.py"))
    assert "starter_reference_diff" not in lessons and "toggle_diff" not in lessons


def test_no_level2_text_names_a_fix_or_points_at_both_failures_even_after_the_checks():
    """Issue 30: "Once your checks pass" named os.replace; "What is wanted" and "How it is
    checked" told which call must be on disk (G6)."""
    text = "\n".join(cell.source for cell in cells("02_two_latent_failures")
                     if cell.cell_type == "markdown" and not meta(cell).get("solution"))
    for giveaway in ("os.replace", "atomic save", "save point A", "mkstemp", "saves only",
                     "which tool calls were started", "a call that was started must",
                     "must be a complete save"):
        assert giveaway not in text, f"the Level 2 text gives the fix away: {giveaway!r}"


def test_level4_gives_invariants_and_asks_a_transfer_question():
    """Issue 30, G7: no JSON layout of pendingToolUse to copy; the written part is about
    asyncio.gather and a slow save, not a repeat of lesson 05."""
    intro = next(c.source for c in cells("04_parallel_tool_calls")
                 if meta(c)["grade_id"] == "l4_intro")
    assert "```json" not in intro and "toolu_01A" not in intro
    assert "before any text" in intro, "F7: tool_result blocks come before any text"
    written = next(c.source for c in cells("04_parallel_tool_calls")
                   if meta(c)["grade_id"] == "l4_written_intro")
    assert "asyncio.gather" in written and "slow" in written and "lands last" in written
    assert "reasoning is the same" not in written


def test_level1_does_not_tell_resume_s_outcome_above_the_cell_that_shows_it():
    """Issue 30, G8."""
    part4 = next(c.source for c in cells("01_incomplete_checkpoint")
                 if meta(c)["grade_id"] == "l1_part4")
    assert "refuses" not in part4 and "finishes the task" not in part4


def test_level_1s_part_4_watches_resume_without_each_of_the_six_fields():
    """Review 4, 1.3: ``messages`` was never taken away; each field is, one at a time."""
    from graders.loop.protocol import SIX_FIELDS

    [cell] = [c for c in cells("01_incomplete_checkpoint")
              if meta(c).get("grade_id") == "l1_resume_field_by_field"]
    listed = re.search(r"for name in (\[.*?\])", cell.source)
    assert listed and set(ast.literal_eval(listed.group(1))) == set(SIX_FIELDS), cell.source
