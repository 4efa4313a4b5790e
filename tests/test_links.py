"""Every relative link in every lesson and exercise resolves where the student reads it (issue 28
item 2): at the repository root (a plain ``jupyter lab`` there), in a workspace
(``checkpoint-lab lab``), on Binder or a repo2docker image, whose ``start`` opens JupyterLab in
a workspace made from the repository root, and on the JupyterLite site (laid out as a workspace).
The notebooks link as the repository lays them out; a workspace's copies are relinked
(`graders.workspace.links`)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from urllib.parse import unquote

import pytest

from graders.workspace.links import relative_links as links_in
from graders.workspace.links import relink
from graders.workspace.notebooks import Workspace, delivered_bytes, released_notebooks

ROOT = Path(__file__).resolve().parents[1]


def relative_links(notebook: Path) -> list[str]:
    """The links of a notebook's markdown cells that point into the course (no URL, no anchor)."""
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    return [link for cell in cells if cell["cell_type"] == "markdown"
            for link in links_in("".join(cell["source"]))]


def broken_links(layout: Path, notebooks: list[Path]) -> list[str]:
    broken = []
    for notebook in notebooks:
        for link in relative_links(notebook):
            target = notebook.parent / unquote(link.split("#", 1)[0])
            if not target.exists():
                broken.append(f"{notebook.relative_to(layout)} -> {link}")
    return broken


def test_the_checker_sees_the_links_and_a_broken_one(tmp_path):
    page = tmp_path / "a.ipynb"
    page.write_text(json.dumps({"cells": [{"cell_type": "markdown", "source": [
        "[next](b.ipynb), [gone](<missing one.ipynb>), [web](https://x.org), [top](#top), ",
        '<a href="b.ipynb#part">b</a>']}]}))
    (tmp_path / "b.ipynb").write_text("{}")
    assert relative_links(page) == ["b.ipynb", "missing one.ipynb", "b.ipynb#part"]
    assert broken_links(tmp_path, [page]) == ["a.ipynb -> missing one.ipynb"]


def _shipped() -> list[Path]:
    return sorted([*ROOT.glob("lessons/*.ipynb"), *ROOT.glob("exercises/*.ipynb")])


def test_every_link_resolves_at_the_repository_root():
    """``jupyter lab`` in a checkout: the notebooks as committed, where they are."""
    notebooks = _shipped()
    assert {n.parent.name for n in notebooks} == {"lessons", "exercises"}
    assert sum(len(relative_links(n)) for n in notebooks) > 20, "the checker found no links"
    assert sum("../exercises/" in link for n in notebooks for link in relative_links(n)) >= 10
    assert broken_links(ROOT, notebooks) == []


def test_every_link_resolves_in_a_workspace(tmp_path):
    """The copies ``checkpoint-lab lab`` makes (Workspace.sync, the code that delivers them)."""
    layout = tmp_path / "workspace"
    report = Workspace(layout, course=ROOT).sync()
    notebooks = sorted(layout.rglob("*.ipynb"))
    assert sorted(report.added) == sorted(item.relpath for item in released_notebooks(ROOT))
    assert sum(len(relative_links(n)) for n in notebooks) > 20, "the checker found no links"
    assert sum("../exercises/lesson2/" in link for n in notebooks
               for link in relative_links(n)) >= 10, "links to the exercises were relinked"
    assert broken_links(layout, notebooks) == []


def test_the_site_s_notebooks_link_as_a_workspace(tmp_path):
    from graders.site.notebooks import write_contents

    written = write_contents(ROOT, tmp_path)
    notebooks = [tmp_path / path for path in written]
    assert sum(len(relative_links(n)) for n in notebooks) > 20
    assert broken_links(tmp_path, notebooks) == []


def test_relinking_moves_only_links_to_the_course_s_notebooks():
    nb = {"cells": [{"cell_type": "markdown", "source": [
        "[L1](../exercises/01_a.ipynb#part-2), [next](02_b.ipynb), [web](https://x.org/a.ipynb),",
        " [top](#top), [data](../fake_llm/x.json), <a href=\"../exercises/02_c.ipynb\">c</a>"]},
        {"cell_type": "code", "source": "'](../exercises/01_a.ipynb)'"}]}
    relink(nb, "lessons/01_x.ipynb")
    assert "".join(nb["cells"][0]["source"]) == (
        "[L1](../exercises/lesson2/01_a.ipynb#part-2), [next](02_b.ipynb), "
        "[web](https://x.org/a.ipynb), [top](#top), [data](../fake_llm/x.json), "
        '<a href="../exercises/lesson2/02_c.ipynb">c</a>')
    assert nb["cells"][1]["source"] == "'](../exercises/01_a.ipynb)'"  # code is not a link
    back = {"cells": [{"cell_type": "markdown", "source": "[lesson](../lessons/02_b.ipynb)"}]}
    assert relink(back, "exercises/01_a.ipynb")["cells"][0]["source"] == \
        "[lesson](../../lessons/02_b.ipynb)"


def test_a_delivered_lesson_differs_from_the_shipped_one_only_in_language_info_and_links():
    lesson = ROOT / "lessons" / "07_knowledge_check_and_recap.ipynb"
    shipped, delivered = json.loads(lesson.read_bytes()), json.loads(delivered_bytes(lesson))
    changed = [i for i, (a, b) in enumerate(zip(shipped["cells"], delivered["cells"],
                                                strict=True)) if a != b]
    assert changed and all(shipped["cells"][i]["cell_type"] == "markdown" for i in changed)
    for i in changed:
        before, after = "".join(shipped["cells"][i]["source"]), "".join(
            delivered["cells"][i]["source"])
        assert after.replace("../exercises/lesson2/", "../exercises/") == before


@pytest.mark.parametrize("workspace_env", [False, True], ids=["home-workspace", "named"])
def test_binder_start_opens_a_workspace_where_every_link_resolves(tmp_path, workspace_env):
    """``start`` as repo2docker runs it (``start CMD...``): the command runs in the workspace."""
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("CHECKPOINT_LAB")}
    env.update(HOME=str(home), REPO_DIR=str(ROOT))
    expected = home / "workspace"
    if workspace_env:
        expected = tmp_path / "mine"
        env["CHECKPOINT_LAB_WORKSPACE"] = str(expected)
    out = subprocess.run(["bash", str(ROOT / "start"), "pwd"], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == str(expected)
    notebooks = sorted(expected.rglob("*.ipynb"))
    lessons = sorted(p.name for p in (expected / "lessons").iterdir())
    assert lessons == sorted(p.name for p in (ROOT / "lessons").glob("*.ipynb")), \
        "each lesson once: no jupytext .py twin in the student's folder"
    assert broken_links(expected, notebooks) == []
    for notebook in notebooks:  # JupyterLab finds the kernel's language_info there: unmodified
        assert json.loads(notebook.read_text())["metadata"]["language_info"]["version"]


def test_binder_start_runs_the_command_even_when_no_workspace_can_be_made(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    env = dict(os.environ, HOME=str(tmp_path), CHECKPOINT_LAB_WORKSPACE=str(blocker))
    out = subprocess.run(["bash", str(ROOT / "start"), "pwd"], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == str(ROOT)
    assert "could not prepare the workspace" in out.stderr and "Traceback" not in out.stderr


@pytest.mark.nbgrader
def test_every_link_resolves_in_a_hub_home(tmp_path):
    """A hub's student: ``lesson2/`` fetched (nbgrader's release, copied unchanged) beside the
    ``lessons/`` the guide copies from the course directory that ``checkpoint-lab course``'s
    code builds."""
    import shutil

    from graders.nbgrader_plumbing.course import build_course
    from graders.nbgrader_plumbing.source_notebook import SOURCES_DIR, authored_sources

    course = build_course(tmp_path / "course", sources=authored_sources(SOURCES_DIR), repo=ROOT)
    home = tmp_path / "home"
    shutil.copytree(course.release_dir, home / "lesson2")
    shutil.copytree(course.lessons_dir, home / "lessons")
    notebooks = sorted(home.rglob("*.ipynb"))
    assert len(notebooks) == len(_shipped())
    assert sum("../lesson2/" in link for n in notebooks for link in relative_links(n)) >= 10
    assert broken_links(home, notebooks) == []
    for notebook in notebooks:  # JupyterLab finds the kernel's language_info there: unmodified
        assert json.loads(notebook.read_text())["metadata"]["language_info"]["version"]
