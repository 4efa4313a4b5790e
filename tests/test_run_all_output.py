"""How much a student reads after Run All (issue 30, "Output"): lesson 01 under 100 lines, the
Level 3 and 4 starters under 60, every check cell one table and one copy of an error.

Lines are those of each output's text form (``text/plain`` or the stream), as a frontend without
widgets shows them; JupyterLab shows the HTML of the same objects.
"""

from __future__ import annotations

import shutil

import nbformat
import pytest
from nbclient import NotebookClient

from tests.conftest import ROOT


def _run_all(path, tmp_path) -> nbformat.NotebookNode:
    copy = tmp_path / path.name
    shutil.copy(path, copy)
    nb = nbformat.read(copy, as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    return nb


def _text(output) -> str:
    if output.output_type == "stream":
        return output.text
    if output.output_type == "error":
        return "\n".join(output.traceback)
    return output.get("data", {}).get("text/plain", "")


def output_lines(nb) -> int:
    """The lines of text Run All left in ``nb``'s outputs."""
    return sum(len(_text(o).splitlines()) for c in nb.cells for o in c.get("outputs", []))


def test_lesson_01_prints_under_100_lines(tmp_path):
    nb = _run_all(ROOT / "lessons" / "01_the_execution_scene_and_six_fields.ipynb", tmp_path)
    assert output_lines(nb) < 100


@pytest.mark.sandbox
@pytest.mark.parametrize("name", ["03_power_cut", "04_parallel_tool_calls"])
def test_an_untouched_starter_prints_under_60_lines_with_one_copy_of_each_error(name, tmp_path):
    nb = _run_all(ROOT / "exercises" / f"{name}.ipynb", tmp_path)
    texts = [_text(o) for c in nb.cells for o in c.get("outputs", [])]
    assert sum(t.count("FakeModelError") for t in texts) <= 1
    for cell in nb.cells:
        tables = [o for o in cell.get("outputs", []) if "check / crash point" in _text(o)]
        assert len(tables) <= 1, "one table per check cell"
    assert output_lines(nb) < 60
