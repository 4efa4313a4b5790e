"""Every relative link in every lesson and exercise resolves where the student reads it (issue 28
items 2 and 3): in a workspace (``checkpoint-lab lab``), and on Binder or a repo2docker image,
whose ``start`` opens JupyterLab in a workspace made from the repository root (one layout)."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from urllib.parse import unquote

import pytest

from graders.workspace.notebooks import released_notebooks

ROOT = Path(__file__).resolve().parents[1]
_LINK = re.compile(r"\]\((?:<([^>]+)>|([^)\s]+))|(?:href|src)=\"([^\"]+)\"")


def relative_links(notebook: Path) -> list[str]:
    """The links of a notebook's markdown cells that point into the course (no URL, no anchor)."""
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    found = []
    for cell in cells:
        if cell["cell_type"] != "markdown":
            continue
        for match in _LINK.finditer("".join(cell["source"])):
            link = match.group(1) or match.group(2) or match.group(3)
            if not re.match(r"^([a-z][a-z0-9+.-]*:|#|/)", link, re.I):
                found.append(link)
    return found


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


def test_every_link_resolves_in_a_workspace(tmp_path):
    layout = tmp_path / "workspace"
    for item in released_notebooks(ROOT):
        (layout / item.relpath).parent.mkdir(parents=True, exist_ok=True)
        (layout / item.relpath).write_bytes(item.source.read_bytes())
    notebooks = sorted(layout.rglob("*.ipynb"))
    assert sum(len(relative_links(n)) for n in notebooks) > 20, "the checker found no links"
    assert broken_links(layout, notebooks) == []


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
