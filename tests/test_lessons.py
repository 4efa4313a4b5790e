"""The lesson notebooks: paired, clean, linked, cited, and run top to bottom by a real kernel."""

from __future__ import annotations

import re
import time
from pathlib import Path

import jupytext
import nbformat
import pytest
from nbclient import NotebookClient

from graders.workspace.notebooks import ASSIGNMENT
from tests.conftest import ROOT

LESSONS = ROOT / "lessons"
NOTEBOOKS = sorted(LESSONS.glob("*.ipynb"))
REFERENCES = [
    "https://www.anthropic.com/engineering/multi-agent-research-system",
    "https://code.claude.com/docs/en/checkpointing",
    "https://www.anthropic.com/engineering/building-effective-agents",
]
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def _ids(path: Path) -> str:
    return path.name


def _cells(nb) -> list[tuple[str, str]]:
    return [(c.cell_type, c.source.strip()) for c in nb.cells]


def test_there_are_lessons_named_nn_snake_case():
    assert len(NOTEBOOKS) >= 5
    for path in NOTEBOOKS:
        assert re.fullmatch(r"\d\d_[a-z0-9]+(_[a-z0-9]+)*\.ipynb", path.name), path.name
    numbers = [p.name[:2] for p in NOTEBOOKS]
    assert numbers == [f"{i:02d}" for i in range(1, len(NOTEBOOKS) + 1)]


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=_ids)
def test_each_notebook_is_in_sync_with_its_jupytext_pair(notebook):
    paired = notebook.with_suffix(".py")
    assert paired.exists(), f"{notebook.name} has no jupytext pair {paired.name}"
    ipynb = nbformat.read(notebook, as_version=4)
    text = jupytext.read(paired)
    assert _cells(ipynb) == _cells(text), (
        f"{notebook.name} and {paired.name} differ: run "
        f"`.venv/bin/jupytext --sync lessons/{notebook.name}`")
    assert ipynb.metadata.get("jupytext", {}).get("formats") == "ipynb,py:percent"
    assert ipynb.metadata["kernelspec"]["name"] == "python3"


def test_every_paired_file_has_its_notebook():
    for paired in LESSONS.glob("*.py"):
        assert paired.with_suffix(".ipynb").exists(), f"{paired.name} has no notebook"


def test_the_readme_lists_every_notebook():
    readme = (LESSONS / "README.md").read_text()
    for path in NOTEBOOKS:
        assert f"`{path.name}`" in readme, f"lessons/README.md does not list {path.name}"
    for cls in ["cl-timeline", "cl-crash-point", "cl-save-points", "cl-write-mode",
                "cl-disk-view", "cl-quiz", "cl-quiz-feedback"]:
        assert f"`{cls}`" in readme
        assert cls in (ROOT / "graders" / "teaching" / "widgets.py").read_text()


def _links(path: Path) -> list[str]:
    nb = nbformat.read(path, as_version=4)
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    return re.findall(r"\]\(([^)\s]+)\)", text)


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=_ids)
def test_links_lead_somewhere(notebook):
    for link in _links(notebook):
        if link.startswith("https://"):
            continue
        if link.startswith(f"../exercises/{ASSIGNMENT}/"):
            # The workspace layout (graders.workspace.notebooks): exercises/<assignment>/NAME; in
            # the source tree the released notebook is exercises/NAME.
            target = ROOT / "exercises" / link.rsplit("/", 1)[1]
        else:
            target = LESSONS / link
        assert target.exists(), f"{notebook.name} links to {link}, which does not exist"


def test_the_source_references_are_cited_by_url():
    text = "\n".join(p.read_text() for p in NOTEBOOKS)
    for url in REFERENCES:
        assert url in text, f"no lesson cites {url}"


def test_the_timeline_and_a_quiz_share_a_notebook():
    together = [p for p in NOTEBOOKS if "show_timeline(" in p.read_text()
                and "show_quiz(" in p.read_text()]
    assert [p.name for p in together] == ["02_two_save_points.ipynb"]


def _execute(path: Path, workdir: Path) -> tuple[nbformat.NotebookNode, float]:
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=120, kernel_name="python3",
                            resources={"metadata": {"path": str(workdir)}})
    start = time.perf_counter()
    client.execute()
    return nb, time.perf_counter() - start


@pytest.mark.sandbox
@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=_ids)
def test_each_notebook_runs_top_to_bottom_without_errors(notebook, tmp_path):
    nb, _ = _execute(notebook, tmp_path)
    problems = []
    for index, cell in enumerate(nb.cells):
        for output in cell.get("outputs", []):
            if output.output_type == "error":
                problems.append(f"cell {index}: {output.ename}: {output.evalue}")
            elif output.output_type == "stream" and output.name == "stderr":
                problems.append(f"cell {index} wrote to stderr: {output.text[:300]}")
    assert not problems, f"{notebook.name}: " + "; ".join(problems)
    assert sorted(p.name for p in tmp_path.iterdir()) == [], "a lesson left files behind"
    printed = [line for cell in nb.cells for o in cell.get("outputs", [])
               if o.output_type == "stream" for line in o.text.splitlines()]
    # JupyterLab wraps a longer printed line wherever it reaches the edge, mid-word (issue 19.10)
    assert not [line for line in printed if len(line) > 100], notebook.name
    assert not [line for line in printed if re.search(r"\bturn None\b", line)]
    if notebook.name.startswith("02_"):
        bundles = [o.get("data", {}) for c in nb.cells for o in c.get("outputs", [])
                   if o.output_type == "display_data" or o.output_type == "execute_result"]
        timeline = [b for b in bundles if "Crash timeline of support-tickets" in
                    b.get("text/plain", "")]
        assert timeline and WIDGET_VIEW in timeline[0], "the timeline widget or its fallback"
        from graders.teaching.quizzes import QUIZZES  # the options' order is this user's

        quiz = QUIZZES["b_only_tool_window"]
        fallback = [b.get("text/plain", "") for b in bundles
                    if WIDGET_VIEW in b and quiz.question in b.get("text/plain", "")]
        assert fallback, "the quiz widget or its fallback"
        assert not any(c.why in fallback[0] for c in quiz.choices), "the fallback tells no answer"


# -- the shape of a lesson (the Carpentries' episode, d2l's exercises) ---------------------------

def _markdown(path: Path) -> list[str]:
    return [c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "markdown"]


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=_ids)
def test_each_lesson_opens_with_its_questions_objectives_and_time_and_ends_with_key_points(
        notebook):
    nb = nbformat.read(notebook, as_version=4)
    first, last = nb.cells[0], nb.cells[-1]
    assert first.cell_type == "markdown" and first.source.startswith("# ")
    for label in ("**Time:** about ", "**Questions:**", "**Objectives:**"):
        assert label in first.source, f"{notebook.name} opens without {label}"
    assert re.search(r"\*\*Time:\*\* about \d+ minutes", first.source)
    assert last.cell_type == "markdown" and last.source.startswith("## Key points\n"), (
        f"{notebook.name} must end with its key points")
    assert last.source.count("\n- ") >= 3, "at least three key points"


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=_ids)
def test_each_lesson_has_a_glossary_of_its_terms_and_a_now_change_it_cell(notebook):
    nb = nbformat.read(notebook, as_version=4)
    text = " ".join(" ".join(c.source for c in nb.cells
                             if not c.source.startswith("## Glossary")).split())
    glossary = [c.source for c in nb.cells if c.source.startswith("## Glossary\n")]
    assert len(glossary) == 1, f"{notebook.name} needs one glossary cell"
    terms = re.findall(r"^- \*\*(.+?)\*\*", glossary[0], re.M)
    assert len(terms) >= 3
    for term in terms:
        word = term.strip("`").split(" / ")[0]
        assert word.lower() in text.lower(), f"{notebook.name}: the glossary defines {term!r}, " \
                                             "which the lesson never uses"
    index = next((i for i, c in enumerate(nb.cells) if c.cell_type == "markdown"
                  and "## Now change it" in c.source), None)
    assert index is not None, f"{notebook.name} has no 'Now change it' cell"
    assert nb.cells[index + 1].cell_type == "code", "a code cell the student edits follows it"


def test_lesson_04_is_split_in_three_and_no_lesson_says_it_is_not_needed():
    names = [p.name for p in NOTEBOOKS]
    assert "04_power_cuts.ipynb" in names and "05_several_tool_calls_in_one_turn.ipynb" in names
    assert names[-1].startswith("08_appendix_")
    for path in NOTEBOOKS:
        assert "needed for the exercises" not in "\n".join(_markdown(path))
    words = {p.name: sum(len(m.split()) for m in _markdown(p)) for p in NOTEBOOKS}
    assert max(words.values()) < 1300, f"a lesson of {max(words.values())} words: {words}"


def test_the_lesson_on_several_calls_says_any_order_of_results_is_accepted():
    """Issue 18 E1: the API pairs results with calls by tool_use_id; block order is a habit."""
    lesson = LESSONS / "05_several_tool_calls_in_one_turn.ipynb"
    text = " ".join(" ".join(_markdown(lesson)).split())
    assert "tool_use_id" in text and "any order" in text
    assert "in the order of the blocks, as a habit" in text
    assert "accept any order" in text
    for path in NOTEBOOKS:
        assert "in the order of the blocks; a result" not in " ".join(_markdown(path))


#: Every text a student reads: the lessons, the exercises as authored, the hints, the solutions and
#: the READMEs beside them.
STUDENT_TEXTS = sorted([*LESSONS.glob("*.py"), LESSONS / "README.md",
                        *(ROOT / "exercises" / "src").glob("*.py"),
                        ROOT / "exercises" / "README.md",
                        *(ROOT / "solutions").glob("*.md"),
                        *(ROOT / "graders" / "data" / "hints").glob("*.md")])
_COUNT = re.compile(r"\b(one|two|three|five|six|both|\d+)\s+(?:exercise\s+)?"
                    r"(?:exercises|levels|exercise notebooks)\b", re.I)


def test_every_student_facing_text_counts_four_exercises():
    """Issue 19.4: lesson 01 said two, the recap listed Levels 1-2, solutions/README.md said
    'both levels'. There are four, and the recap and both READMEs name every one."""
    for path in STUDENT_TEXTS:
        wrong = _COUNT.findall(path.read_text())
        assert not wrong, f"{path.relative_to(ROOT)} counts the exercises as {wrong}"
    for path in (LESSONS / "07_knowledge_check_and_recap.py", ROOT / "exercises" / "README.md",
                 ROOT / "solutions" / "README.md",
                 LESSONS / "01_the_execution_scene_and_six_fields.py"):
        text = path.read_text()
        assert "four" in text.lower(), path.name
        for level in ("01_incomplete_checkpoint", "02_two_latent_failures", "03_power_cut",
                      "04_parallel_tool_calls"):
            if path.name != "01_the_execution_scene_and_six_fields.py":
                assert level in text, f"{path.relative_to(ROOT)} does not name {level}"


def test_the_timeline_text_and_its_legend_use_the_same_word():
    """Issue 19.9: 'things to try' said 'greyed out' where the legend says 'striped'."""
    from graders.teaching.widgets import _legend_html

    assert "striped" in _legend_html()
    lesson = (LESSONS / "02_two_save_points.py").read_text()
    assert "greyed" not in lesson and "are striped" in lesson
