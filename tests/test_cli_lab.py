"""``checkpoint-lab lab`` and ``checkpoint-lab reset`` as a user runs them.

The last test starts the real JupyterLab (no browser) and asks its own APIs what a student's
browser would be told: the news pop-up is off, nbgrader's assignment list finds the exercises,
the kernel is this Python; and saves a notebook through them: no jupytext pair is written beside
it, and a widget is saved as its "run this cell" line.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

import nbformat
import pytest

from graders.cli import lab as cli_lab
from graders.cli import main
from graders.workspace.notebooks import Workspace, delivered_bytes
from tests.browser import start_lab, stop_lab


def _notebook(path, text):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell(text)]
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, str(path))


@pytest.fixture
def course(tmp_path, monkeypatch):
    root = tmp_path / "course"
    _notebook(root / "lessons" / "01_intro.ipynb", "lesson one")
    _notebook(root / "exercises" / "02_two_latent_failures.ipynb", "level two")
    monkeypatch.setenv("CHECKPOINT_LAB_COURSE", str(root))
    return root


def _one_line_error(capsys, command: str) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert err.startswith(f"checkpoint-lab {command}: "), err
    return err


def test_reset_puts_the_release_back_and_says_where_the_backup_is(course, tmp_path, capsys):
    ws = Workspace(tmp_path / "ws")
    ws.sync()
    mine = ws.path / "lessons" / "01_intro.ipynb"
    mine.write_text("my answers")

    assert main(["reset", "01_intro", "--workspace", str(ws.path)]) == 0

    out = capsys.readouterr().out
    assert mine.read_bytes() == delivered_bytes(course / "lessons" / "01_intro.ipynb")
    backup = re.search(r"Your version is kept in (\S+)", out).group(1)
    assert open(backup).read() == "my answers"


def test_reset_of_an_unknown_notebook_is_one_clear_line(course, tmp_path, capsys):
    assert main(["reset", "nope", "--workspace", str(tmp_path / "ws")]) == 2
    err = _one_line_error(capsys, "reset")
    assert "01_intro, 02_two_latent_failures" in err


@pytest.mark.parametrize("port", ["0", "70000"])
def test_lab_rejects_a_port_that_is_not_one(course, tmp_path, capsys, port):
    assert main(["lab", "--no-browser", "--port", port, "--workspace", str(tmp_path)]) == 2
    assert "is not a port" in _one_line_error(capsys, "lab")


def test_lab_rejects_a_port_in_use(course, tmp_path, capsys):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        assert main(["lab", "--no-browser", "--port", str(port),
                     "--workspace", str(tmp_path / "ws")]) == 2
    assert "already in use" in _one_line_error(capsys, "lab")
    assert not (tmp_path / "ws").exists()


def test_lab_rejects_a_workspace_that_is_a_file(course, tmp_path, capsys):
    (tmp_path / "f").write_text("x")
    assert main(["lab", "--no-browser", "--workspace", str(tmp_path / "f")]) == 2
    assert "is a file, not a folder" in _one_line_error(capsys, "lab")


def test_lab_says_so_when_the_course_has_no_notebooks(tmp_path, monkeypatch, capsys):
    (tmp_path / "empty" / "lessons").mkdir(parents=True)
    (tmp_path / "empty" / "exercises").mkdir()
    monkeypatch.setenv("CHECKPOINT_LAB_COURSE", str(tmp_path / "empty"))
    assert main(["lab", "--no-browser", "--workspace", str(tmp_path / "ws")]) == 2
    assert "ships no notebooks" in _one_line_error(capsys, "lab")


def test_allow_root_only_for_root(course, tmp_path, monkeypatch):
    ws = Workspace(tmp_path / "ws")
    monkeypatch.setattr(cli_lab.os, "geteuid", lambda: 0)
    assert "--allow-root" in cli_lab.jupyter_command(ws, port=None, open_browser=True)
    monkeypatch.setattr(cli_lab.os, "geteuid", lambda: 1000)
    cmd = cli_lab.jupyter_command(ws, port=9000, open_browser=False)
    assert "--allow-root" not in cmd
    assert "--no-browser" in cmd and "--ServerApp.port=9000" in cmd


def test_prepare_keeps_a_setting_the_student_changed(course, tmp_path):
    ws = Workspace(tmp_path / "ws")
    ws.sync()
    env = cli_lab.prepare_jupyter(ws)
    settings = tmp_path / "ws" / ".checkpoint-lab" / "lab" / "user-settings"
    assert env["JUPYTERLAB_SETTINGS_DIR"] == str(settings)
    news = settings / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
    assert json.loads(news.read_text())["fetchNews"] == "false"
    news.write_text(json.dumps({"fetchNews": "true", "checkForUpdates": True}))
    cli_lab.prepare_jupyter(ws)
    assert json.loads(news.read_text())["fetchNews"] == "true"


def _get(lab, path):
    request = urllib.request.Request(f"{lab.url}{path}",
                                     headers={"Authorization": f"token {lab.token}"})
    with urllib.request.urlopen(request, timeout=20) as response:
        return response.read().decode()


def _save_lesson_with_a_widget(lab) -> nbformat.NotebookNode:
    """Save a paired notebook with a widget output through JupyterLab's API, as its Save does."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["jupytext"] = {"formats": "ipynb,py:percent"}
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    cell = nbformat.v4.new_code_cell("show_quiz('x')")
    cell.outputs = [nbformat.v4.new_output(
        "display_data", metadata={"checkpoint_lab_rerun": "Run this cell to see the quiz."},
        data={"application/vnd.jupyter.widget-view+json": {"model_id": "m1", "version_major": 2,
                                                           "version_minor": 0},
              "text/plain": "the quiz"})]
    nb.cells = [cell]
    body = json.dumps({"type": "notebook", "format": "json",
                       "content": json.loads(nbformat.writes(nb))}).encode()
    request = urllib.request.Request(
        f"{lab.url}/api/contents/lessons/02_x.ipynb", data=body, method="PUT",
        headers={"Authorization": f"token {lab.token}", "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=20) as response:
        assert response.status in (200, 201)
    return nbformat.read(str(lab.workspace / "lessons" / "02_x.ipynb"), as_version=4)


@pytest.mark.browser
def test_the_real_jupyterlab_is_configured_for_the_course(course, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    lab = start_lab(tmp_path / "ws", tmp_path, course=course,
                    env={"HOME": str(home), "JUPYTER_CONFIG_DIR": str(home / ".jupyter")})
    try:
        news = json.loads(
            _get(lab, "/lab/api/settings/@jupyterlab/apputils-extension:notification"))
        assert news["settings"]["fetchNews"] == "false"
        assert news["settings"]["checkForUpdates"] is False

        page = _get(lab, "/lab")
        config = json.loads(re.search(
            r'<script id="jupyter-config-data" type="application/json">(.*?)</script>',
            page, re.S).group(1))
        assert config["news"] == {"disabled": True}
        assert config["buildCheck"] is False and config["buildAvailable"] is False
        assert "@jupyter/nbgrader:formgrader" in config["disabledExtensions"]
        assert "@jupyter/nbgrader:validate-assignment" not in config["disabledExtensions"]

        listing = json.loads(_get(lab, "/assignments?course_id=checkpoint-lab"))
        assert listing["success"], listing
        [lesson2] = listing["value"]
        assert (lesson2["assignment_id"], lesson2["status"]) == ("lesson2", "fetched")
        assert [nb["path"] for nb in lesson2["notebooks"]] == [
            "exercises/lesson2/02_two_latent_failures.ipynb"]

        specs = json.loads(_get(lab, "/api/kernelspecs"))
        kernel_python = Path(specs["kernelspecs"]["python3"]["spec"]["argv"][0])
        assert kernel_python.parent == Path(sys.executable).parent  # the course's environment

        files = json.loads(_get(lab, "/api/contents/lessons"))
        assert [f["name"] for f in files["content"]] == ["01_intro.ipynb"]

        # Saving a lesson in the workspace: no jupytext pair beside it (the lessons carry
        # jupytext's pairing metadata for the repository), and each widget saved as its hint.
        saved = _save_lesson_with_a_widget(lab)
        files = json.loads(_get(lab, "/api/contents/lessons"))
        assert sorted(f["name"] for f in files["content"]) == ["01_intro.ipynb", "02_x.ipynb"]
        [output] = saved.cells[0].outputs
        assert output.data == {"text/plain": "Run this cell to see the quiz."}
    finally:
        stop_lab(lab)
    assert "No nbgrader_config.py file found" not in lab.log.read_text()
    # The user's own Jupyter configuration was not written to.
    assert not (home / ".jupyter" / "lab").exists()


@pytest.mark.browser
def test_reset_of_a_notebook_open_in_jupyterlab_says_to_close_it_first(course, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    lab = start_lab(tmp_path / "ws", tmp_path, course=course,
                    env={"HOME": str(home), "JUPYTER_CONFIG_DIR": str(home / ".jupyter")})
    mine = lab.workspace / "lessons" / "01_intro.ipynb"
    env = dict(os.environ, JUPYTER_RUNTIME_DIR=str(lab.runtime_dir),
               CHECKPOINT_LAB_COURSE=str(course))
    command = [str(Path(sys.executable).with_name("checkpoint-lab")), "reset", "01_intro",
               "--workspace", str(lab.workspace)]
    try:
        mine.write_text("my answers")
        session = lab.api("POST", "/api/sessions", {
            "path": "lessons/01_intro.ipynb", "type": "notebook", "name": "01_intro.ipynb",
            "kernel": {"name": "python3"}})
        done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=60)
        assert done.returncode == 2, done.stdout + done.stderr
        assert done.stderr.count("\n") == 1, done.stderr
        assert "lessons/01_intro.ipynb is open in JupyterLab" in done.stderr
        port = lab.url.rsplit(":", 1)[1]
        assert f":{port}/" in done.stderr and "Close it first" in done.stderr
        assert mine.read_text() == "my answers", "nothing is reset while it is open"

        lab.api("DELETE", f"/api/sessions/{session['id']}")  # File > Close and Shut Down
        done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=60)
        assert done.returncode == 0, done.stderr
        assert mine.read_bytes() == delivered_bytes(course / "lessons" / "01_intro.ipynb")
    finally:
        stop_lab(lab)
