"""A plain ``jupyter lab`` started in a checkout lists each lesson once (issue 28 item 2).

``lessons/`` holds each lesson twice, ``NN_name.ipynb`` and its jupytext pair ``NN_name.py``,
and jupytext shows both as notebooks. Jupyter reads no configuration from the folder it starts
in (a ``jupyter_server_config.py`` there is ignored: checked below), so the course's server
extension, which every JupyterLab of the course's environment loads, hides the pairs.
"""

from __future__ import annotations

import pytest

from graders.workspace.jupyter_extension import jupytext_twins
from tests.browser import BIN, start_plain_lab, stop_lab
from tests.conftest import ROOT


def test_the_twins_are_the_lessons_py_pairs_and_nothing_else(tmp_path):
    (tmp_path / "lessons").mkdir()
    for name in ("01_a.ipynb", "01_a.py", "helper.py", "02_b.ipynb"):
        (tmp_path / "lessons" / name).write_text("")
    (tmp_path / "03_c.py").write_text("")
    (tmp_path / "03_c.ipynb").write_text("")  # not in lessons/: a student's own pair stays
    assert jupytext_twins(tmp_path, tmp_path / "nowhere") == ["01_a.py"]
    shipped = jupytext_twins(ROOT)
    assert len(shipped) == len(list((ROOT / "lessons").glob("*.ipynb"))) >= 8, shipped


@pytest.mark.browser
@pytest.mark.timeout(300)
def test_jupyter_reads_no_configuration_from_the_folder_it_starts_in(tmp_path):
    """Why a config file at the repository root would not do: ``--show-config`` in a folder
    holding one shows none of its settings."""
    import subprocess

    (tmp_path / "jupyter_server_config.py").write_text(
        'c.ContentsManager.hide_globs = ["probe-from-the-cwd"]\n')
    (tmp_path / "jupyter_lab_config.py").write_text(
        'c.ContentsManager.hide_globs = ["probe-from-the-cwd"]\n')
    shown = subprocess.run([str(BIN / "jupyter"), "lab", "--show-config"], cwd=tmp_path,
                           capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0 and "ServerApp" in shown.stdout, shown.stderr[-2000:]
    assert "probe-from-the-cwd" not in shown.stdout


@pytest.mark.browser
@pytest.mark.timeout(300)
def test_jupyter_lab_at_the_repository_root_lists_each_lesson_once(tmp_path):
    lab = start_plain_lab(ROOT, tmp_path, BIN)
    try:
        listed = lab.api("GET", "/api/contents/lessons")
        names = sorted(item["name"] for item in listed["content"])
        lessons = sorted(p.name for p in (ROOT / "lessons").glob("*.ipynb"))
        assert [n for n in names if n.endswith((".ipynb", ".py"))] == lessons, names
        kinds = {item["name"]: item["type"] for item in listed["content"]}
        assert all(kinds[n] == "notebook" for n in lessons), kinds
        # the pair is hidden from the listing, not gone: an author can still open it by name
        pair = lab.api("GET", "/api/contents/lessons/02_two_save_points.py?content=0")
        assert pair["name"] == "02_two_save_points.py"
    finally:
        stop_lab(lab)
