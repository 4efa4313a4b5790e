"""Solutions on request: ``checkpoint-lab solutions`` and ``solutions()`` copy them into the
student's workspace, where JupyterLab's file browser reaches them; never by default."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from graders.workspace.notebooks import Workspace
from graders.workspace.solutions import copy_solutions, solutions
from tests.conftest import ROOT

COMMAND = Path(sys.executable).with_name("checkpoint-lab")


def shipped(level: str = "") -> list[str]:
    """The course's solution files of ``level`` (or every level), as ``solutions/`` holds them."""
    return sorted(p.name for p in (ROOT / "solutions").glob(f"0{level}*_*" if level else "0*_*")
                  if p.suffix in (".py", ".md"))


def _run(*args, cwd: Path, env_workspace: Path | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "CHECKPOINT_LAB_WORKSPACE"}
    if env_workspace:
        env["CHECKPOINT_LAB_WORKSPACE"] = str(env_workspace)
    return subprocess.run([str(COMMAND), "solutions", *map(str, args)], capture_output=True,
                          text=True, cwd=cwd, env=env, timeout=60)


def test_a_fresh_workspace_holds_no_solutions(tmp_path):
    ws = Workspace(tmp_path / "ws", course=ROOT)
    ws.sync()
    assert not (ws.path / "solutions").exists()
    assert not list(ws.path.rglob("0*_*.py")) and not list(ws.path.rglob("*.written_answers.md"))


def test_the_command_copies_one_level_into_the_workspace_and_says_where(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    result = _run("2", "--anyway", cwd=ROOT, env_workspace=ws)
    assert result.returncode == 0, result.stderr
    copied = sorted(p.name for p in (ws / "solutions").iterdir())
    assert copied == shipped("2") and "02_two_latent_failures.py" in copied
    assert (ws / "solutions" / "02_two_latent_failures.py").read_bytes() == (
        ROOT / "solutions" / "02_two_latent_failures.py").read_bytes()
    assert str(ws / "solutions") in result.stdout and "02_two_latent_failures.py" in result.stdout


def test_a_copy_the_student_changed_is_kept(tmp_path):
    ws = tmp_path / "ws"
    (ws / "solutions").mkdir(parents=True)
    (ws / "solutions" / "01_incomplete_checkpoint.py").write_text("# my notes\n")
    result = _run("--workspace", ws, "--anyway", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (ws / "solutions" / "01_incomplete_checkpoint.py").read_text() == "# my notes\n"
    assert "01_incomplete_checkpoint.py (your copy, kept)" in result.stdout
    assert sorted(p.name for p in (ws / "solutions").iterdir()) == shipped()


def test_no_workspace_gets_one_clear_line(tmp_path):
    result = _run("--workspace", tmp_path / "nope", cwd=tmp_path)
    assert result.returncode == 2 and result.stdout == ""
    assert len(result.stderr.strip().splitlines()) == 1
    assert "python3 course.py lab" in result.stderr


def test_the_notebook_helper_copies_and_links_relative_to_the_notebook(tmp_path, monkeypatch):
    ws = tmp_path / "ws"
    notebook_dir = ws / "exercises" / "lesson2"
    notebook_dir.mkdir(parents=True)
    monkeypatch.chdir(notebook_dir)  # a kernel runs in its notebook's folder
    monkeypatch.setenv("CHECKPOINT_LAB_WORKSPACE", str(ws))
    monkeypatch.delenv("CHECKPOINT_LAB_GRADING", raising=False)
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    shown = solutions(1, anyway=True)
    assert sorted(p.name for p in (ws / "solutions").iterdir()) == shipped("1")
    assert 'href="../../solutions/01_incomplete_checkpoint.py"' in shown._repr_html_()
    assert str(ws / "solutions") in str(shown)


def test_nothing_is_copied_in_a_grading_kernel(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    assert solutions(workspace=tmp_path) is None
    assert not (tmp_path / "solutions").exists()
    assert "graded" in capsys.readouterr().out


def test_an_unknown_level_is_refused(tmp_path):
    with pytest.raises(ValueError, match="no level 5"):
        copy_solutions(tmp_path, 5)
    result = _run("5", "--workspace", tmp_path, cwd=tmp_path)
    assert result.returncode == 2 and "invalid choice" in result.stderr
