"""The student's workspace: notebooks copied in once, never overwritten, reset on request."""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
import pytest

from graders.workspace.notebooks import (
    WIDGET_HINT,
    Workspace,
    WorkspaceError,
    before_save,
    course_root,
    default_workspace,
    delivered_bytes,
    kernel_language_info,
    released_notebooks,
)


def _notebook(path, text):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell(text)]
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, str(path))


@pytest.fixture
def course(tmp_path):
    root = tmp_path / "course"
    _notebook(root / "lessons" / "01_intro.ipynb", "lesson one")
    _notebook(root / "exercises" / "02_two_latent_failures.ipynb", "level two")
    (root / "exercises" / "README.md").write_text("not a notebook")
    return root


def _same_but_language_info(copy, release) -> bool:
    mine, shipped = (nbformat.read(str(p), as_version=4) for p in (copy, release))
    assert mine.metadata.pop("language_info") == kernel_language_info()
    shipped.metadata.pop("language_info", None)
    return mine == shipped


@pytest.fixture
def ws(course, tmp_path):
    return Workspace(tmp_path / "mine", course=course)


def test_first_sync_copies_lessons_and_exercises_into_their_places(ws, course):
    report = ws.sync()
    assert report.added == ["lessons/01_intro.ipynb",
                            "exercises/lesson2/02_two_latent_failures.ipynb"]
    copied = ws.path / "exercises" / "lesson2" / "02_two_latent_failures.ipynb"
    shipped = course / "exercises" / "02_two_latent_failures.ipynb"
    assert copied.read_bytes() == delivered_bytes(shipped)
    assert _same_but_language_info(copied, shipped)
    assert not (ws.path / "exercises" / "lesson2" / "README.md").exists()


def test_sync_never_overwrites_the_students_work_and_adds_new_releases(ws, course):
    ws.sync()
    mine = ws.path / "lessons" / "01_intro.ipynb"
    mine.write_text("my answers")
    _notebook(course / "lessons" / "01_intro.ipynb", "lesson one, fixed")
    _notebook(course / "lessons" / "03_resume.ipynb", "lesson three")

    report = ws.sync()

    assert mine.read_text() == "my answers"
    assert report.added == ["lessons/03_resume.ipynb"]
    assert report.newer_release == ["lessons/01_intro.ipynb"]
    assert any("checkpoint-lab reset 01_intro" in line for line in report.lines())
    assert (ws.path / "lessons" / "03_resume.ipynb").exists()


def test_a_file_the_student_already_had_is_kept(ws):
    (ws.path / "lessons").mkdir(parents=True)
    (ws.path / "lessons" / "01_intro.ipynb").write_text("mine from before")
    report = ws.sync()
    assert report.kept == ["lessons/01_intro.ipynb"]
    assert (ws.path / "lessons" / "01_intro.ipynb").read_text() == "mine from before"


def test_a_deleted_notebook_stays_deleted_until_reset(ws):
    ws.sync()
    (ws.path / "lessons" / "01_intro.ipynb").unlink()
    report = ws.sync()
    assert report.deleted == ["lessons/01_intro.ipynb"]
    assert not (ws.path / "lessons" / "01_intro.ipynb").exists()
    ws.reset("01_intro")
    assert (ws.path / "lessons" / "01_intro.ipynb").exists()


def test_reset_restores_the_release_and_backs_up_the_students_version(ws, course):
    ws.sync()
    mine = ws.path / "exercises" / "lesson2" / "02_two_latent_failures.ipynb"
    mine.write_text("half-finished answers")

    result = ws.reset("02_two_latent_failures")

    assert result.path == mine
    released = course / "exercises" / "02_two_latent_failures.ipynb"
    assert mine.read_bytes() == delivered_bytes(released)
    assert result.backup is not None and result.backup.parent == ws.path / "backups"
    assert result.backup.read_text() == "half-finished answers"
    # A second reset finds nothing changed and keeps no empty backup.
    assert ws.reset("02_two_latent_failures").backup is None


def test_two_resets_in_one_second_keep_both_backups(ws):
    ws.sync()
    mine = ws.path / "lessons" / "01_intro.ipynb"
    mine.write_text("first try")
    first = ws.reset("01_intro").backup
    mine.write_text("second try")
    second = ws.reset("01_intro").backup
    assert first != second
    assert first.read_text() == "first try" and second.read_text() == "second try"


@pytest.mark.parametrize("name", [
    "02_two_latent_failures", "02_two_latent_failures.ipynb",
    "exercises/02_two_latent_failures.ipynb", "mine/exercises/lesson2/02_two_latent_failures.ipynb",
])
def test_reset_understands_a_name_or_a_path(ws, name):
    assert ws.find(name).relpath == "exercises/lesson2/02_two_latent_failures.ipynb"


def test_reset_of_an_unknown_notebook_names_the_real_ones(ws):
    with pytest.raises(WorkspaceError, match="'03_nope' is not a notebook.*01_intro, "
                       "02_two_latent_failures"):
        ws.reset("03_nope")
    assert not (ws.path / "backups").exists()


def test_a_workspace_may_not_be_a_file_or_inside_the_shipped_folders(course, tmp_path):
    (tmp_path / "afile").write_text("x")
    with pytest.raises(WorkspaceError, match="is a file, not a folder"):
        Workspace(tmp_path / "afile", course=course)
    with pytest.raises(WorkspaceError, match="inside the course's lessons/ folder"):
        Workspace(course / "lessons" / "ws", course=course)
    with pytest.raises(WorkspaceError, match="would hold the course's own files"):
        Workspace(course, course=course)


def test_a_lost_manifest_loses_no_work(ws):
    ws.sync()
    (ws.path / "lessons" / "01_intro.ipynb").write_text("my answers")
    (ws.state_dir / "manifest.json").write_text("{not json")
    report = ws.sync()
    assert report.kept == ["lessons/01_intro.ipynb",
                           "exercises/lesson2/02_two_latent_failures.ipynb"]
    assert (ws.path / "lessons" / "01_intro.ipynb").read_text() == "my answers"
    assert json.loads((ws.state_dir / "manifest.json").read_text())["delivered"]


def test_course_root_from_the_environment(course, monkeypatch, tmp_path):
    monkeypatch.setenv("CHECKPOINT_LAB_COURSE", str(course))
    assert course_root() == course
    assert default_workspace() == course / "workspace"
    monkeypatch.setenv("CHECKPOINT_LAB_COURSE", str(tmp_path / "nowhere"))
    with pytest.raises(WorkspaceError, match="cannot find the course's lessons/ and exercises/"):
        course_root()


def test_the_real_course_ships_notebooks_to_the_documented_places(repo_root, monkeypatch):
    monkeypatch.delenv("CHECKPOINT_LAB_COURSE", raising=False)
    assert course_root() == repo_root
    for item in released_notebooks():
        assert item.source.is_file()
        assert item.relpath.startswith(("lessons/", "exercises/lesson2/"))
        assert item.relpath.endswith(item.source.name)


def test_the_exercises_folder_is_named_after_the_nbgrader_assignment():
    from graders.nbgrader_plumbing import build
    from graders.workspace import notebooks

    assert notebooks.ASSIGNMENT == build.ASSIGNMENT


def test_a_copy_carries_the_kernels_language_info_so_opening_it_changes_nothing(ws):
    # JupyterLab writes the kernel's language_info into a notebook as its kernel starts; a copy
    # without it (or with another Python's) is marked modified before the student edits it.
    import platform

    ws.sync()
    for path in (ws.path / "lessons" / "01_intro.ipynb",
                 ws.path / "exercises" / "lesson2" / "02_two_latent_failures.ipynb"):
        info = json.loads(path.read_text())["metadata"]["language_info"]
        assert info["name"] == "python" and info["version"] == platform.python_version()
        assert info["codemirror_mode"] == {"name": "ipython", "version": 3}


def test_an_untouched_copy_is_not_backed_up_by_reset_nor_reported_as_changed(ws, course):
    ws.sync()
    assert ws.reset("01_intro").backup is None  # the copy is the release, language_info aside
    _notebook(course / "lessons" / "01_intro.ipynb", "lesson one, new")
    report = ws.sync()
    assert report.newer_release == ["lessons/01_intro.ipynb"]


def _saved(outputs):
    cell = nbformat.v4.new_code_cell("show_quiz('x')")
    cell.outputs = outputs
    nb = nbformat.v4.new_notebook()
    nb.cells = [cell, nbformat.v4.new_markdown_cell("text")]
    model = {"type": "notebook", "content": json.loads(nbformat.writes(nb))}
    before_save(model=model, path="lessons/x.ipynb", contents_manager=None)
    return model["content"]["cells"][0]["outputs"]


def test_a_saved_notebook_keeps_a_run_this_cell_line_in_place_of_each_widget():
    widget = {"application/vnd.jupyter.widget-view+json": {"model_id": "abc", "version_major": 2,
                                                           "version_minor": 0},
              "text/plain": "the quiz, with every answer explained"}
    hint = "Run this cell to see the quiz (its buttons need the running kernel)."
    ours = nbformat.v4.new_output("display_data", data=widget,
                                  metadata={"checkpoint_lab_rerun": hint})
    script = nbformat.v4.new_output("display_data", data={"application/javascript": "x()",
                                                          "text/plain": ""},
                                    metadata={"checkpoint_lab_rerun": ""})
    other = nbformat.v4.new_output("execute_result", data=widget, execution_count=3)
    text = nbformat.v4.new_output("stream", name="stdout", text="printed\n")
    table = nbformat.v4.new_output("display_data", data={"text/html": "<table></table>"})
    saved = _saved([ours, script, other, text, table])
    assert [o.get("data", {}).get("text/plain") for o in saved] == [hint, WIDGET_HINT, None, None]
    assert saved[0]["output_type"] == "display_data" and saved[1]["execution_count"] == 3
    assert saved[2]["output_type"] == "stream" and "".join(saved[2]["text"]) == "printed\n"
    assert "".join(saved[3]["data"]["text/html"]) == "<table></table>"  # left as it was
    assert not any("application/vnd.jupyter.widget-view+json" in o.get("data", {})
                   for o in saved)
    nbformat.validate(nbformat.from_dict({**nbformat.v4.new_notebook(),
                                          "cells": [nbformat.v4.new_code_cell(outputs=saved)]}))


def test_the_pre_save_hook_leaves_other_files_alone():
    model = {"type": "file", "content": "print('hi')"}
    before_save(model=model, path="x.py")
    assert model == {"type": "file", "content": "print('hi')"}


@pytest.mark.sandbox
@pytest.mark.parametrize("name", ["01_incomplete_checkpoint", "02_two_latent_failures"])
def test_running_an_exercise_leaves_no_checkpoint_json_beside_it(repo_root, tmp_path, name):
    # try_it() used to write checkpoint.json into the exercise folder, which was then handed in
    # and copied into every student's feedback folder.
    import shutil

    from nbclient import NotebookClient

    folder = tmp_path / "exercises" / "lesson2"
    folder.mkdir(parents=True)
    path = folder / f"{name}.ipynb"
    shutil.copyfile(repo_root / "exercises" / f"{name}.ipynb", path)
    notebook = nbformat.read(str(path), as_version=4)
    NotebookClient(notebook, timeout=120, allow_errors=True, kernel_name="python3",
                   resources={"metadata": {"path": str(folder)}}).execute()
    ran = [c for c in notebook.cells if c.cell_type == "code" and "try_it(" in c.source
           and "def try_it" not in c.source]
    assert ran and all(c.execution_count for c in ran)
    shown = "".join(o.get("text", "") for c in ran for o in c.outputs)
    assert "checkpoint.json" in shown  # try_it did save and show a checkpoint
    assert sorted(p.name for p in folder.iterdir()) == [path.name]


def test_the_pre_save_hook_leaves_a_notebook_that_is_not_the_courses_alone():
    # Any JupyterLab in the course's environment runs the hook (graders.workspace
    # .jupyter_extension): someone's own notebook with a widget is saved as JupyterLab gives it.
    widget = {"application/vnd.jupyter.widget-view+json": {"model_id": "abc", "version_major": 2,
                                                           "version_minor": 0},
              "text/plain": "IntSlider(value=3)"}
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("import ipywidgets\nipywidgets.IntSlider(3)", outputs=[
        nbformat.v4.new_output("execute_result", data=widget, execution_count=1)])]
    model = {"type": "notebook", "content": json.loads(nbformat.writes(nb))}
    before = json.loads(json.dumps(model))
    before_save(model=model, path="mine.ipynb", contents_manager=None)
    assert model == before


_HERE_AND_SCRATCH = """
import os, tempfile
print("CWD", os.getcwd())
print("SCRATCH", SCRATCH)
"""


@pytest.mark.sandbox
@pytest.mark.parametrize("name", ["01_incomplete_checkpoint", "02_two_latent_failures"])
def test_try_it_comes_back_to_the_notebooks_folder_and_its_scratch_folder_goes_with_the_kernel(
        repo_root, tmp_path, monkeypatch, name):
    import shutil

    from nbclient import NotebookClient

    from graders.workspace.scratch import PREFIX

    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setenv("TMPDIR", str(temp))  # the kernel's temp folder, to look into afterwards
    # a folder a killed kernel left behind (no process has this id): removed by the next kernel
    dead = temp / f"{PREFIX}999999999-old"
    dead.mkdir()
    (dead / "checkpoint.json").write_text("{}")
    folder = tmp_path / "exercises" / "lesson2"
    folder.mkdir(parents=True)
    path = folder / f"{name}.ipynb"
    shutil.copyfile(repo_root / "exercises" / f"{name}.ipynb", path)
    notebook = nbformat.read(str(path), as_version=4)
    notebook.cells.append(nbformat.v4.new_code_cell(_HERE_AND_SCRATCH))
    NotebookClient(notebook, timeout=120, allow_errors=True, kernel_name="python3",
                   resources={"metadata": {"path": str(folder)}}).execute()
    said = "".join(o.get("text", "") for o in notebook.cells[-1].outputs)
    cwd = re.search(r"^CWD (.+)$", said, re.M).group(1)
    scratch = re.search(r"^SCRATCH (.+)$", said, re.M).group(1)
    assert Path(cwd) == folder, "try_it left the kernel in another folder"
    assert Path(scratch).parent == temp and Path(scratch).name.startswith(PREFIX)
    ran = [c for c in notebook.cells if "try_it(" in c.source and "def try_it" not in c.source]
    assert len(ran) >= 2  # several runs, one scratch folder
    assert not dead.exists(), "the folder of a kernel that is gone was not removed"
    assert list(temp.glob(f"{PREFIX}*")) == [], "the kernel's scratch folder outlived it"
