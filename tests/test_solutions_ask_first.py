"""``solutions(n)`` and ``checkpoint-lab solutions N`` ask first while the student's own copy of
the exercise does not pass its visible checks: the notebook says to look "once your checks pass"
(issue 18 item 7). The student's copy is graded for real (the visible checks, as
``checkpoint-lab check`` runs them)."""

from __future__ import annotations

import os
import pty
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from graders.workspace.solutions import solutions
from tests.conftest import ROOT

COMMAND = Path(sys.executable).with_name("checkpoint-lab")
LEVEL2 = "02_two_latent_failures"


@pytest.fixture
def starter_ws(tmp_path) -> Path:
    """A workspace whose Level 2 copy is the starter, as released."""
    ws = tmp_path / "ws"
    (ws / "exercises" / "lesson2").mkdir(parents=True)
    shutil.copyfile(ROOT / "exercises" / f"{LEVEL2}.ipynb",
                    ws / "exercises" / "lesson2" / f"{LEVEL2}.ipynb")
    return ws


@pytest.fixture
def fixed_ws(tmp_path) -> Path:
    """A workspace whose Level 2 copy has the reference in its answer cells."""
    from graders.nbgrader_plumbing.source_notebook import build_source_notebook

    ws = tmp_path / "ws"
    (ws / "exercises" / "lesson2").mkdir(parents=True)
    nb = build_source_notebook(ROOT / "exercises" / "src" / f"{LEVEL2}.py")
    nbformat.write(nb, ws / "exercises" / "lesson2" / f"{LEVEL2}.ipynb")
    return ws


def _env(ws: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("JPY_SESSION_NAME",)}
    return {**env, "CHECKPOINT_LAB_WORKSPACE": str(ws)}


def _run(ws: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(COMMAND), "solutions", "2", *args], capture_output=True,
                          text=True, env=_env(ws), stdin=subprocess.DEVNULL, timeout=300)


@pytest.mark.sandbox
def test_the_command_copies_nothing_while_the_checks_fail_and_says_how_to_go_on(starter_ws):
    done = _run(starter_ws)
    assert done.returncode == 1, done.stderr
    assert not (starter_ws / "solutions").exists()
    said = done.stdout
    assert "once your checks pass" in said
    assert f"exercises/lesson2/{LEVEL2}.ipynb (as last saved): l2_kill_during_save, " \
           "l2_kill_during_tool not passed yet" in said, said  # the checks' labels
    assert "checkpoint-lab solutions 2 --anyway" in said
    done = _run(starter_ws, "--anyway")
    assert done.returncode == 0, done.stderr
    assert (starter_ws / "solutions" / f"{LEVEL2}.py").exists()


@pytest.mark.sandbox
def test_in_a_terminal_the_command_asks_and_copies_on_yes(starter_ws):
    def ask(answer: bytes) -> tuple[int, str]:
        leader, follower = pty.openpty()
        process = subprocess.Popen([str(COMMAND), "solutions", "2"], stdin=follower,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   env=_env(starter_ws))
        os.close(follower)
        os.write(leader, answer)
        out, _ = process.communicate(timeout=300)
        os.close(leader)
        return process.returncode, out.decode()

    status, said = ask(b"n\n")
    assert status == 1 and "Copy Level 2's solutions anyway? [y/N]" in said
    assert "Nothing copied." in said and not (starter_ws / "solutions").exists()
    status, said = ask(b"y\n")
    assert status == 0, said
    assert (starter_ws / "solutions" / f"{LEVEL2}.py").exists()


@pytest.mark.sandbox
def test_once_the_checks_pass_nothing_is_asked(fixed_ws):
    done = _run(fixed_ws)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "once your checks pass" not in done.stdout
    assert (fixed_ws / "solutions" / f"{LEVEL2}.py").exists()


@pytest.mark.sandbox
def test_in_a_notebook_it_asks_with_a_button_that_copies(starter_ws, monkeypatch):
    monkeypatch.setenv("CHECKPOINT_LAB_WORKSPACE", str(starter_ws))
    notebook = starter_ws / "exercises" / "lesson2" / f"{LEVEL2}.ipynb"
    monkeypatch.setenv("JPY_SESSION_NAME", str(notebook))  # what Jupyter tells the kernel
    for name in ("CHECKPOINT_LAB_GRADING", "NBGRADER_EXECUTION"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(starter_ws)  # wherever the kernel's current folder is, the links hold
    asked = solutions(2)
    data, metadata = asked._repr_mimebundle_()
    assert "solutions(2, anyway=True)" in data["text/plain"]  # a viewer without widgets
    assert "l2_kill_during_save" in data["text/plain"]
    assert not (starter_ws / "solutions").exists()
    [question, button] = asked.children
    assert "once your checks pass" in question.value
    button.click()  # what a click in the browser sends
    [copied] = asked.children
    assert (starter_ws / "solutions" / f"{LEVEL2}.py").exists()
    assert f'href="../../solutions/{LEVEL2}.py"' in copied.value
