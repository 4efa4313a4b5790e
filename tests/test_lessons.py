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
    if notebook.name.startswith("02_"):
        bundles = [o.get("data", {}) for c in nb.cells for o in c.get("outputs", [])
                   if o.output_type == "display_data" or o.output_type == "execute_result"]
        timeline = [b for b in bundles if "Crash timeline of support-tickets" in
                    b.get("text/plain", "")]
        assert timeline and WIDGET_VIEW in timeline[0], "the timeline widget or its fallback"
        from graders.teaching.quizzes import QUIZZES  # the options' order is this user's

        right = QUIZZES["b_only_tool_window"].right_letter
        assert any(WIDGET_VIEW in b and f"({right}) right:" in b.get("text/plain", "")
                   for b in bundles), "the quiz widget or its fallback"
