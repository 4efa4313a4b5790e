"""The project as a whole: layout, packaging, environment.yml, clean notebooks, lint, CI."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.conftest import ROOT

LAYOUT = [
    "lessons", "exercises", "graders", "solutions", "fake_llm", "environment.yml", "README.md",
]


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def _environment_pip_section() -> list[str]:
    lines = (ROOT / "environment.yml").read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip() == "- pip:")
    pip_lines = []
    for line in lines[start + 1 :]:
        stripped = line.strip()
        if stripped.startswith("#"):
            continue
        if not stripped.startswith("- "):
            break
        pip_lines.append(stripped[2:].strip())
    return pip_lines


def _name(requirement: str) -> str:
    """A requirement's project name, normalized as PEP 503 says (``Foo_bar[x]>=1`` -> foo-bar)."""
    name = re.match(r"[A-Za-z0-9._-]+", requirement.strip()).group(0)
    return re.sub(r"[-_.]+", "-", name).lower()


def _tracked(pattern: str) -> list[Path]:
    out = subprocess.run(
        ["git", "ls-files", "--", pattern], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    return [ROOT / line for line in out.splitlines() if line]


def test_top_level_layout_is_there():
    missing = [name for name in LAYOUT if not (ROOT / name).exists()]
    assert not missing, f"the course's top level lacks {missing}"


def test_environment_yml_pins_what_pyproject_asks_for():
    project = _pyproject()["project"]
    wanted = set(project["dependencies"]) | set(project["optional-dependencies"]["test"])
    pip_section = _environment_pip_section()
    # not editable: an editable install leaves out the Jupyter settings the wheel carries
    assert "." in pip_section, "environment.yml must install the course itself (- .)"
    assert "-c constraints.txt" in pip_section, \
        "environment.yml must install the pinned versions (- -c constraints.txt)"
    have = {spec for spec in pip_section if spec not in (".", "-c constraints.txt")}
    assert have == wanted, (
        "environment.yml and pyproject.toml disagree; "
        f"only in pyproject: {sorted(wanted - have)}, "
        f"only in environment.yml: {sorted(have - wanted)}"
    )
    assert "python=3.11" in (ROOT / "environment.yml").read_text()


def test_constraints_pin_every_dependency_pyproject_names():
    project = _pyproject()["project"]
    named = {_name(r) for r in project["dependencies"]}
    for extra in project["optional-dependencies"].values():
        named |= {_name(r) for r in extra}
    lines = [line.strip() for line in (ROOT / "constraints.txt").read_text().splitlines()]
    pins = [line for line in lines if line and not line.startswith("#")]
    pinned = {}
    for line in pins:
        name, sep, version = line.partition("==")
        assert sep and re.fullmatch(r"[0-9][0-9A-Za-z.+!-]*", version), \
            f"constraints.txt: {line!r} is not an exact pin (name==version)"
        pinned[_name(name)] = version
    assert len(pinned) == len(pins), "constraints.txt names a package twice"
    assert "checkpoint-lab" not in pinned, "the course itself is not a constraint"
    missing = sorted(named - set(pinned))
    assert not missing, f"constraints.txt does not pin {missing}; run `python3 course.py pin`"
    assert "python3 course.py pin" in lines[0] + lines[1]


def test_environment_yml_python_matches_requires_python():
    requires = _pyproject()["project"]["requires-python"]
    assert requires == ">=3.11"
    assert sys.version_info >= (3, 11)


@pytest.mark.parametrize("notebook", _tracked("*.ipynb"), ids=lambda p: str(p.relative_to(ROOT)))
def test_committed_notebooks_are_clean(notebook: Path):
    nb = json.loads(notebook.read_text())
    dirty = []
    for index, cell in enumerate(nb["cells"]):
        if cell["cell_type"] == "code" and (cell.get("outputs") or cell.get("execution_count")):
            dirty.append(f"cell {index} has outputs or an execution count")
        stray = set(cell.get("metadata", {})) - {"nbgrader", "tags", "checkpoint_lab", "editable",
                                                  "deletable", "slideshow"}
        if stray:
            dirty.append(f"cell {index} has stray metadata {sorted(stray)}")
    stray_nb = set(nb.get("metadata", {})) - {"kernelspec", "language_info", "jupytext"}
    if stray_nb:
        dirty.append(f"notebook metadata has stray keys {sorted(stray_nb)}")
    assert not dirty, f"{notebook.name} is not committed clean: " + "; ".join(dirty)


def test_ruff_finds_nothing():
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    if ruff is None:
        pytest.fail("ruff is not installed; it comes with the test extra: pip install -e '.[test]'")
    result = subprocess.run([ruff, "check", "."], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_readme_quick_start_is_two_commands_and_ci_runs_the_test_one():
    readme = (ROOT / "README.md").read_text()
    block = re.search(r"## Quick start.*?```(?:bash|sh)?\n(.*?)```", readme, re.S)
    assert block, "README.md needs a Quick start section with a code block"
    commands = [line.split("#")[0].strip() for line in block.group(1).splitlines()]
    commands = [c for c in commands if c]
    assert commands == ["python3 course.py lab", "python3 course.py test"], commands
    ci = (ROOT / ".ci" / "run").read_text()
    assert "python3 course.py test" in ci, ".ci/run must run README's test command"


def test_checkpoint_lab_help_and_version():
    exe = [sys.executable, "-m", "graders.cli"]
    version = _pyproject()["project"]["version"]
    out = subprocess.run([*exe, "--version"], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0 and out.stdout.strip() == f"checkpoint-lab {version}"
    out = subprocess.run([*exe, "--help"], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0
    for sub in ["lab", "reset", "check", "course", "grade", "crash", "gradescope"]:
        assert re.search(rf"^\s+{sub}\s", out.stdout, re.M), f"--help does not list {sub}"


def test_checkpoint_lab_rejects_an_unknown_subcommand():
    out = subprocess.run([sys.executable, "-m", "graders.cli", "nonsense"],
                         capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 2
    assert "invalid choice: 'nonsense'" in out.stderr


def test_course_py_rejects_an_unknown_command_without_touching_the_venv(tmp_path):
    shutil.copy(ROOT / "course.py", tmp_path / "course.py")
    (tmp_path / "pyproject.toml").write_text("")
    out = subprocess.run([sys.executable, "course.py", "serve"], cwd=tmp_path,
                         capture_output=True, text=True)
    assert out.returncode == 2
    assert "unknown command 'serve'" in out.stderr
    assert not (tmp_path / ".venv").exists()


def test_course_py_creates_the_venv_once_and_reinstalls_when_pyproject_changes(tmp_path):
    """The bootstrap for real, on a tiny project: a venv, an install, a stamp, the constraints
    file passed to pip (and in the stamp), and `pin`."""
    shutil.copy(ROOT / "course.py", tmp_path / "course.py")
    (tmp_path / "tiny").mkdir()
    (tmp_path / "tiny" / "__init__.py").write_text("")
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(
        '[build-system]\nrequires = ["setuptools>=68"]\nbuild-backend = "setuptools.build_meta"\n'
        '[project]\nname = "tiny"\nversion = "0"\n[project.optional-dependencies]\ntest = []\n'
        '[tool.setuptools]\npackages = ["tiny"]\n'
    )
    (tmp_path / "test_tiny.py").write_text("def test_ok():\n    import tiny\n")

    def run() -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "course.py", "test", "-q", "-p", "no:cacheprovider"],
                              cwd=tmp_path, capture_output=True, text=True, timeout=600)

    # pytest is not in the tiny project's venv: the command must say so rather than pass.
    first = run()
    assert "Creating the course's virtual environment" in first.stdout
    assert "Installing the course's packages" in first.stdout
    assert (tmp_path / ".venv" / ".checkpoint-lab-installed").exists()
    assert first.returncode != 0 and "No module named pytest" in first.stderr

    second = run()
    assert "Installing" not in second.stdout, "an unchanged pyproject.toml must not reinstall"

    pyproject.write_text(pyproject.read_text().replace("test = []", 'test = ["pytest"]'))
    third = run()
    assert "Installing the course's packages" in third.stdout
    assert third.returncode == 0, third.stdout + third.stderr
    assert "1 passed" in third.stdout

    def pytest_version() -> str:
        out = subprocess.run([str(tmp_path / ".venv" / "bin" / "python"), "-m", "pytest",
                              "--version"], capture_output=True, text=True)
        return (out.stdout + out.stderr).strip()

    # A constraints file: pip installs what it pins (an older pytest than the newest).
    (tmp_path / "constraints.txt").write_text("# pinned\npytest==8.0.0\n")
    fourth = run()
    assert "Installing the course's packages" in fourth.stdout, "constraints.txt is in the stamp"
    assert fourth.returncode == 0, fourth.stdout + fourth.stderr
    assert pytest_version() == "pytest 8.0.0"

    # `pin` runs the tests, then writes what the venv holds; the next run installs nothing.
    pinned = subprocess.run([sys.executable, "course.py", "pin", "-q", "-p", "no:cacheprovider"],
                            cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert pinned.returncode == 0, pinned.stdout + pinned.stderr
    assert "1 passed" in pinned.stdout and "pinned versions" in pinned.stdout
    lines = (tmp_path / "constraints.txt").read_text().splitlines()
    assert lines[0].startswith("# ") and "pytest==8.0.0" in lines
    assert not [line for line in lines if line.lower().startswith(("tiny", "-e"))]
    assert "Installing" not in run().stdout

    # `pin --upgrade` takes the newest versions pyproject.toml allows, then pins them.
    upgraded = subprocess.run([sys.executable, "course.py", "pin", "--upgrade", "-q",
                               "-p", "no:cacheprovider"],
                              cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert upgraded.returncode == 0, upgraded.stdout + upgraded.stderr
    newest = pytest_version().split()[-1]
    assert newest != "8.0.0"
    assert f"pytest=={newest}" in (tmp_path / "constraints.txt").read_text().splitlines()
    assert "Installing" not in run().stdout

    # A failing test suite leaves constraints.txt as it was.
    before = (tmp_path / "constraints.txt").read_text()
    (tmp_path / "test_tiny.py").write_text("def test_ok():\n    assert False\n")
    failed = subprocess.run([sys.executable, "course.py", "pin", "-q", "-p", "no:cacheprovider"],
                            cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert failed.returncode != 0 and "constraints.txt is unchanged" in failed.stderr
    assert (tmp_path / "constraints.txt").read_text() == before


def test_python_dash_m_gives_the_same_one_line_errors_as_the_installed_command(tmp_path):
    missing = tmp_path / "nowhere.ipynb"
    out = subprocess.run([sys.executable, "-m", "graders.cli", "check", str(missing)],
                         capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 2, out.stderr
    assert "Traceback" not in out.stderr
    assert out.stderr.startswith("checkpoint-lab check: ") and str(missing) in out.stderr
