"""The build: authored jupytext files -> nbgrader source notebooks -> nbgrader's own release."""

from __future__ import annotations

import importlib
import json
import textwrap
from pathlib import Path

import nbformat
import pytest
from nbconvert.preprocessors import Preprocessor
from traitlets.config import Config

from graders.nbgrader_plumbing.build import (
    BuildError,
    build_source_notebook,
    clean_notebook,
    extract_code,
    notebook_text,
)
from graders.nbgrader_plumbing.course import build_course, load_config
from tests.conftest import ROOT
from tests.fixtures.notebooks.course_cache import shared_course

TINY = ROOT / "tests" / "fixtures" / "notebooks" / "src" / "01_tiny.py"
EXERCISES = ["01_incomplete_checkpoint.ipynb", "02_two_latent_failures.ipynb"]


def _by_id(nb) -> dict:
    return {c.metadata["nbgrader"]["grade_id"]: c for c in nb.cells}


def test_extract_code_takes_names_with_the_imports_and_constants_they_use():
    code = extract_code("solutions/02_two_latent_failures.py:save_checkpoint")
    assert code.startswith("import json\nimport os\nimport tempfile\n")
    assert 'CHECKPOINT = "checkpoint.json"' in code
    assert "def save_checkpoint(state):" in code and "def run_agent" not in code
    compile(code, "extracted", "exec")


def test_extract_code_keeps_the_order_given_and_narrows_from_imports(tmp_path):
    (tmp_path / "m.py").write_text(textwrap.dedent('''\
        """Doc."""
        from os import path, sep
        import json as j

        def b():
            return path.join("a", "b")

        def a():
            return j.dumps(1)
        '''))
    code = extract_code("m.py:a,b", tmp_path)
    assert code.index("def a") < code.index("def b")
    assert "from os import path\n" in code and "sep" not in code
    assert "import json as j" in code
    assert extract_code("m.py", tmp_path).startswith("from os import path, sep")


@pytest.mark.parametrize("spec, words", [
    ("solutions/02_two_latent_failures.py:no_such_name", "has no top-level no_such_name"),
    ("solutions/missing.py:x", "no file solutions/missing.py"),
])
def test_extract_code_says_what_is_wrong(spec, words):
    with pytest.raises(BuildError, match=words):
        extract_code(spec)


def test_source_notebook_has_solution_regions_and_keeps_the_starter():
    nb = build_source_notebook(TINY)
    cells = _by_id(nb)
    double = cells["tiny_double"]
    assert double.source.startswith("### BEGIN SOLUTION\n")
    assert "return 2 * x" in double.source and "LIMIT = 3" in double.source
    assert double.metadata["checkpoint_lab"] == {"starter": "def double(x):\n    return x"}
    assert cells["tiny_literal"].metadata["checkpoint_lab"] == {"starter": "ANSWER = None"}
    assert [c.id for c in nb.cells] == list(cells), "cell ids come from grade_ids"
    assert set(nb.metadata) == {"kernelspec", "language_info"}
    assert notebook_text(build_source_notebook(TINY)) == notebook_text(nb), "deterministic"


def test_an_answer_cell_without_a_starter_is_refused(tmp_path):
    text = TINY.read_text().replace(', "starter_from": "tests/fixtures/notebooks/'
                                    'tiny_starter.py:double"', "")
    (tmp_path / "01_bad.py").write_text(text)
    with pytest.raises(BuildError, match="starter"):
        build_source_notebook(tmp_path / "01_bad.py")


def test_code_from_fills_a_locked_cell_and_is_refused_on_an_answer_cell(tmp_path):
    header = ('# %% nbgrader={"grade": false, "grade_id": "given", "locked": true, '
              '"schema_version": 3, "solution": SOLUTION} '
              'checkpoint_lab={"code_from": "tests/fixtures/notebooks/tiny_starter.py:double"}\n')
    (tmp_path / "01_given.py").write_text(header.replace("SOLUTION", "false"))
    cell = build_source_notebook(tmp_path / "01_given.py").cells[0]
    assert cell.source.startswith("def double(") and "checkpoint_lab" not in cell.metadata
    (tmp_path / "01_answer.py").write_text(header.replace("SOLUTION", "true"))
    with pytest.raises(BuildError, match="code_from belongs on locked code cells"):
        build_source_notebook(tmp_path / "01_answer.py")


@pytest.mark.nbgrader
def test_generate_assignment_releases_each_cells_starter(tmp_path):
    course = build_course(tmp_path / "course", sources=[TINY])
    nb = nbformat.read(course.release_dir / "01_tiny.ipynb", as_version=4)
    cells = _by_id(nb)
    assert cells["tiny_double"].source == "def double(x):\n    return x"
    assert cells["tiny_save"].source.startswith("import json\n")
    assert cells["tiny_literal"].source == "ANSWER = None"
    assert cells["tiny_written"].source == "Explain why.\n\nYOUR ANSWER HERE"
    text = json.dumps(nb)
    for leaked in ("NotImplementedError", "BEGIN SOLUTION", "MARK SCHEME", "rename is atomic",
                   "checkpoint_lab", "2 * x"):
        assert leaked not in text, leaked
    source = nbformat.read(course.source_dir / "01_tiny.ipynb", as_version=4)
    assert "rename is atomic" in _by_id(source)["tiny_written"].source


@pytest.mark.nbgrader
@pytest.mark.parametrize("name", EXERCISES)
def test_committed_exercises_are_exactly_what_the_build_releases(name):
    released = shared_course().release_dir / name
    committed = ROOT / "exercises" / name
    assert committed.exists(), f"run `python -m graders.nbgrader_plumbing.build` to write {name}"
    expected = notebook_text(clean_notebook(nbformat.read(released, as_version=4)))
    assert committed.read_text() == expected, (
        f"exercises/{name} is not what the build releases from exercises/src/; "
        "run `python -m graders.nbgrader_plumbing.build` and commit the result")


@pytest.mark.parametrize("name", EXERCISES)
def test_committed_exercises_hold_the_starter_and_no_solution(name):
    nb = json.loads((ROOT / "exercises" / name).read_text())
    text = json.dumps(nb)
    for leaked in ("NotImplementedError", "BEGIN SOLUTION", "Mark scheme", "checkpoint_lab",
                   "os.replace(tmp_path"):
        assert leaked not in text, leaked
    answers = [c for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("solution")
               and c["cell_type"] == "code"]
    assert answers and all("".join(c["source"]).strip() for c in answers)
    if name.startswith("02"):
        starter = Path(ROOT / "tests/fixtures/02_two_latent_failures/starter.py").read_text()
        run_agent = next(c for c in answers
                         if c["metadata"]["nbgrader"]["grade_id"] == "l2_run_agent")
        assert "".join(run_agent["source"]) in starter


# --- every preprocessor a course's nbgrader_config.py names exists ----------------------------

#: The preprocessor lists a course's config must set (nbgrader would fall back to its defaults,
#: which run the student's code in a kernel, were one missing).
CONFIGURED_LISTS = {"GenerateAssignment.preprocessors", "Autograde.sanitize_preprocessors",
                    "Autograde.autograde_preprocessors", "GenerateFeedback.preprocessors"}

def _preprocessor_lists(config: Config) -> dict[str, list[str]]:
    """Every ``c.<Class>.<...>preprocessors`` list of a loaded config, by ``Class.trait``."""
    return {f"{section}.{trait}": list(value)
            for section, traits in config.items() if isinstance(traits, Config)
            for trait, value in traits.items() if trait.endswith("preprocessors")}


def _problem_with(path: str) -> str | None:
    """Why the class path ``path`` is not an importable preprocessor (None when it is one)."""
    module, _, name = path.rpartition(".")
    try:
        found = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as err:
        return f"{type(err).__name__}: {err}"
    if not (isinstance(found, type) and issubclass(found, Preprocessor)):
        return f"{found!r} is not a preprocessor class"
    return None


def test_the_class_path_check_reports_a_name_that_does_not_exist():
    assert _problem_with("graders.nbgrader_plumbing.preprocessors.RunNothing") is None
    assert "AttributeError" in _problem_with("graders.nbgrader_plumbing.preprocessors.RunNoting")
    assert "ModuleNotFoundError" in _problem_with("graders.no_such_module.RunNothing")
    assert "not a preprocessor" in _problem_with("graders.nbgrader_plumbing.course.build_course")


@pytest.mark.nbgrader
def test_every_preprocessor_the_built_config_names_can_be_imported():
    lists = _preprocessor_lists(load_config(shared_course().root))
    assert CONFIGURED_LISTS <= set(lists), f"the built config sets only {sorted(lists)}"
    problems = {f"{where}: {path}": problem for where, paths in lists.items() for path in paths
                if (problem := _problem_with(path))}
    assert not problems, problems
    ours = {path for paths in lists.values() for path in paths if path.startswith("graders.")}
    assert ours, "the config names none of the course's own preprocessors"
