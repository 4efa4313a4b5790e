"""The project as a whole: layout, packaging, environment.yml, clean notebooks, lint, CI."""

from __future__ import annotations

import json
import os
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
    pins = [line.split("#", 1)[0].strip() for line in lines if line and not line.startswith("#")]
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


def test_importing_nbformat_builds_no_uri_grammar():
    """rfc3987-syntax (pulled in by jsonschema's format-nongpl extra from jsonschema 4.25) builds
    a Lark grammar when jsonschema is imported: seconds in every process that imports nbformat.
    pyproject.toml holds jsonschema below 4.25 to keep it out."""
    code = ("import sys, nbformat, jsonschema\n"
            "print(sorted(m for m in sys.modules\n"
            "             if m.split('.')[0] in ('rfc3987_syntax', 'lark')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]", (
        f"import nbformat loads {out.stdout.strip()}: jsonschema's format-nongpl extra brought "
        "rfc3987-syntax back (see the jsonschema hold in pyproject.toml)")


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


# -- course.py's bootstrap: against a stand-in for pip, then one real install -------------------

TINY_PYPROJECT = (
    '[build-system]\nrequires = ["setuptools>=68"]\nbuild-backend = "setuptools.build_meta"\n'
    '[project]\nname = "tiny"\nversion = "0"\n[project.optional-dependencies]\ntest = []\n'
    '[tool.setuptools]\npackages = ["tiny"]\n')

#: A stand-in for pip in a tiny project's .venv: records its arguments, prints ``pip-freeze.txt``
#: for ``freeze``, writes PIP_STUB_STDERR to stderr and exits with PIP_STUB_EXIT (0 unless set).
STUB_PIP = """
import json, os, sys
from pathlib import Path
venv = Path(sys.prefix)
with open(venv / "pip-calls.jsonl", "a") as f:
    f.write(json.dumps(sys.argv[1:]) + "\\n")
if sys.argv[1:2] == ["freeze"]:
    print((venv / "pip-freeze.txt").read_text(), end="")
sys.stderr.write(os.environ.get("PIP_STUB_STDERR", ""))
sys.exit(int(os.environ.get("PIP_STUB_EXIT", "0")))
"""


def _tiny_project(root: Path, *, test: str = "def test_ok():\n    import tiny\n") -> Path:
    shutil.copy(ROOT / "course.py", root / "course.py")
    (root / "tiny").mkdir()
    (root / "tiny" / "__init__.py").write_text("")
    (root / "pyproject.toml").write_text(TINY_PYPROJECT)
    (root / "test_tiny.py").write_text(test)
    return root / "pyproject.toml"


def _stub_venv(root: Path, *, pytest_too: bool = True) -> Path:
    """``root/.venv`` made without pip, whose ``python -m pip`` is :data:`STUB_PIP`; with
    ``pytest_too``, this environment's pytest and ``tiny`` importable there (a ``.pth``)."""
    import venv

    venv.EnvBuilder(with_pip=False, symlinks=os.name != "nt").create(root / ".venv")
    site = next((root / ".venv" / "lib").glob("python3*/site-packages"))
    (site / "pip").mkdir()
    (site / "pip" / "__init__.py").write_text("")
    (site / "pip" / "__main__.py").write_text(STUB_PIP)
    if pytest_too:
        (site / "outer.pth").write_text(f"{root}\n{Path(pytest.__file__).parents[1]}\n")
    return root / ".venv"


def _course(root: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    command = args or ("test", "-q", "-p", "no:cacheprovider")
    return subprocess.run([sys.executable, "course.py", *command], cwd=root,
                          capture_output=True, text=True, timeout=600,
                          env={**os.environ, **env})


def _pip_calls(venv: Path) -> list[list[str]]:
    log = venv / "pip-calls.jsonl"
    calls = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    log.unlink(missing_ok=True)
    return calls


def test_course_py_installs_once_and_again_when_pyproject_or_constraints_change(tmp_path):
    pyproject = _tiny_project(tmp_path)
    venv = _stub_venv(tmp_path, pytest_too=False)  # each run ends at once: no pytest there

    first = _course(tmp_path)
    assert "Installing the course's packages" in first.stdout, first.stdout + first.stderr
    [call] = _pip_calls(venv)
    assert call[:1] == ["install"] and call[-2:] == ["-e", f"{tmp_path}[test]"], call
    assert "-c" not in call, "no constraints.txt: nothing to constrain with"
    assert (venv / ".checkpoint-lab-installed").exists()

    second = _course(tmp_path)
    assert "Installing" not in second.stdout and _pip_calls(venv) == [], \
        "an unchanged pyproject.toml must not reinstall"

    pyproject.write_text(pyproject.read_text().replace("test = []", 'test = ["pytest"]'))
    assert "Installing the course's packages" in _course(tmp_path).stdout
    assert len(_pip_calls(venv)) == 1

    constraints = tmp_path / "constraints.txt"
    constraints.write_text("# pinned\npytest==8.0.0\n")
    assert "Installing the course's packages" in _course(tmp_path).stdout
    pins, call = _pip_calls(venv)
    # the pins alone first, without their dependencies (nothing to resolve: fails fast), then
    # the project under the same pins
    assert "--no-deps" in pins and pins[pins.index("-r") + 1] == str(constraints), pins
    assert call[call.index("-c") + 1] == str(constraints), call
    constraints.write_text("# pinned\npytest==8.0.1\n")
    assert "Installing" in _course(tmp_path).stdout, "constraints.txt is in the stamp"
    assert len(_pip_calls(venv)) == 2
    assert "Installing" not in _course(tmp_path).stdout


def test_course_py_says_when_pip_fails_and_tries_again_next_time(tmp_path):
    _tiny_project(tmp_path)
    venv = _stub_venv(tmp_path, pytest_too=False)
    failed = _course(tmp_path, PIP_STUB_EXIT="3")
    assert failed.returncode != 0
    assert "pip could not install the course's packages on Python " in failed.stderr
    assert "(exit 3)" in failed.stderr
    assert "Traceback" not in failed.stderr
    assert not (venv / ".checkpoint-lab-installed").exists()
    assert "Installing" in _course(tmp_path).stdout and len(_pip_calls(venv)) == 2


def test_course_py_test_passes_pytest_s_failure_on(tmp_path):
    _tiny_project(tmp_path)
    _stub_venv(tmp_path, pytest_too=False)
    out = _course(tmp_path)
    assert out.returncode != 0 and "No module named pytest" in out.stderr


FROZEN = ("pytest==8.0.0\n# a comment pip may print\n-e /somewhere/tiny\nPluggy==1.4.0\n"
          "iniconfig==2.0.0\n")


def test_pin_writes_what_the_venv_holds_once_the_tests_pass(tmp_path):
    _tiny_project(tmp_path)
    venv = _stub_venv(tmp_path)
    (venv / "pip-freeze.txt").write_text(FROZEN)
    pinned = _course(tmp_path, "pin", "-q", "-p", "no:cacheprovider")
    assert pinned.returncode == 0, pinned.stdout + pinned.stderr
    assert "1 passed" in pinned.stdout and "Wrote 3 pinned versions" in pinned.stdout
    lines = (tmp_path / "constraints.txt").read_text().splitlines()
    assert lines[0].startswith("# ") and "python3 course.py pin" in lines[0] + lines[1]
    assert [line.split("#")[0].strip() for line in lines[3:]] == [
        "iniconfig==2.0.0", "Pluggy==1.4.0", "pytest==8.0.0"]
    [*_, freeze] = _pip_calls(venv)
    assert freeze[:2] == ["freeze", "--exclude-editable"], freeze
    assert "Installing" not in _course(tmp_path).stdout, "pin leaves .venv matching its stamp"


def test_pin_leaves_the_constraints_alone_when_the_tests_fail(tmp_path):
    _tiny_project(tmp_path, test="def test_ok():\n    assert False\n")
    venv = _stub_venv(tmp_path)
    (venv / "pip-freeze.txt").write_text(FROZEN)
    (tmp_path / "constraints.txt").write_text("# pinned\npytest==7.0.0\n")
    failed = _course(tmp_path, "pin", "-q", "-p", "no:cacheprovider")
    assert failed.returncode != 0 and "constraints.txt is unchanged" in failed.stderr
    assert (tmp_path / "constraints.txt").read_text() == "# pinned\npytest==7.0.0\n"
    assert not [call for call in _pip_calls(venv) if call[:1] == ["freeze"]]


def test_pin_upgrade_asks_pip_for_the_newest_versions_pyproject_allows(tmp_path):
    _tiny_project(tmp_path)
    venv = _stub_venv(tmp_path)
    (venv / "pip-freeze.txt").write_text(FROZEN)
    (tmp_path / "constraints.txt").write_text("# pinned\npytest==7.0.0\n")
    upgraded = _course(tmp_path, "pin", "--upgrade", "-q", "-p", "no:cacheprovider")
    assert upgraded.returncode == 0, upgraded.stdout + upgraded.stderr
    install, freeze = _pip_calls(venv)
    assert install[:1] == ["install"] and "-c" not in install, "the old pins must not hold it"
    assert install[install.index("--upgrade-strategy") + 1] == "eager", install
    assert freeze[:1] == ["freeze"]
    assert "pytest==8.0.0" in (tmp_path / "constraints.txt").read_text().splitlines()


def _real_tiny_project(root: Path) -> None:
    """A tiny project whose test extra is pytest, pinned to an old release."""
    pyproject = _tiny_project(root)
    pyproject.write_text(pyproject.read_text().replace("test = []", 'test = ["pytest"]'))
    (root / "constraints.txt").write_text("# pinned\npytest==8.0.0\n")


def _pytest_version(root: Path) -> str:
    out = subprocess.run([str(root / ".venv" / "bin" / "python"), "-m", "pytest", "--version"],
                         capture_output=True, text=True)
    return (out.stdout + out.stderr).strip()


@pytest.mark.install
def test_course_py_makes_a_real_venv_where_pip_installs_the_pinned_versions(tmp_path):
    """The one real bootstrap: a venv with pip, a real install, the pin honoured."""
    _real_tiny_project(tmp_path)
    first = _course(tmp_path)
    assert "Creating the course's virtual environment" in first.stdout
    assert "Installing the course's packages" in first.stdout
    assert first.returncode == 0 and "1 passed" in first.stdout, first.stdout + first.stderr
    assert _pytest_version(tmp_path) == "pytest 8.0.0"


@pytest.mark.index
@pytest.mark.install
def test_pin_upgrade_takes_the_newest_release_from_the_index(tmp_path):
    """Opt in (``-m index``): asks the package index for its newest pytest."""
    _real_tiny_project(tmp_path)
    assert _course(tmp_path).returncode == 0
    upgraded = _course(tmp_path, "pin", "--upgrade", "-q", "-p", "no:cacheprovider")
    assert upgraded.returncode == 0, upgraded.stdout + upgraded.stderr
    newest = _pytest_version(tmp_path).split()[-1]
    assert newest != "8.0.0"
    assert f"pytest=={newest}  # Requires-Python >=" in (tmp_path / "constraints.txt").read_text()
    assert "Installing" not in _course(tmp_path).stdout


def test_python_dash_m_gives_the_same_one_line_errors_as_the_installed_command(tmp_path):
    missing = tmp_path / "nowhere.ipynb"
    out = subprocess.run([sys.executable, "-m", "graders.cli", "check", str(missing)],
                         capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 2, out.stderr
    assert "Traceback" not in out.stderr
    assert out.stderr.startswith("checkpoint-lab check: ") and str(missing) in out.stderr


#: Three tests for the fast tier's watch (tests/speeds.py): one that starts nothing, one that
#: starts a Jupyter command through a child on PATH, unmarked, and the same marked nbgrader.
TIERED_TESTS = '''
import subprocess, sys
import pytest

NESTED = [sys.executable, "-c", "import subprocess; subprocess.run(['jupyter', '--paths'], "
          "check=True, capture_output=True)"]

def test_starts_nothing():
    assert sum(range(4)) == 6

def test_starts_jupyter_unmarked():
    subprocess.run(NESTED, check=True)

@pytest.mark.nbgrader
def test_starts_jupyter_marked():
    subprocess.run(NESTED, check=True)
'''


def _tiered_run(tmp_path: Path, tier: str, *more: str) -> subprocess.CompletedProcess:
    (tmp_path / "test_tiered.py").write_text(TIERED_TESTS)
    env = dict(os.environ, PYTHONPATH=str(ROOT),
               PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    env.pop("PYTEST_XDIST_WORKER", None)  # this test's own run may be a worker of a parallel one
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "tests.speeds", tier, "-q",
                           "-p", "no:cacheprovider", "-W", "ignore", "-rf", *more,
                           "test_tiered.py"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)


#: One process, and two pytest-xdist workers (``course.py test --workers 2``).
WORKERS = [pytest.param((), id="one-process"),
           pytest.param(("-n", "2", "--dist", "loadgroup"), id="two-workers")]


@pytest.mark.parametrize("more", WORKERS)
def test_the_fast_tier_fails_a_test_that_starts_what_it_leaves_out(tmp_path, more):
    if more:
        pytest.importorskip("xdist", reason="pytest-xdist is not installed")
    fast = _tiered_run(tmp_path, "--fast", *more)
    said = fast.stdout + fast.stderr
    assert fast.returncode == 1, said
    # pytest-xdist's summary leaves out what the workers deselected
    deselected = "" if more else ", 1 deselected"
    assert re.search(rf"\b1 failed, 1 passed{deselected} in\b", said), said
    assert "test_starts_jupyter_unmarked started a Jupyter command during its call" in said, said
    assert "jupyter --paths" in said, said
    assert "Mark it for the slow tier: @pytest.mark.nbgrader or browser" in said, said
    slow = _tiered_run(tmp_path, "--slow", *more)
    said = slow.stdout + slow.stderr
    deselected = "" if more else ", 2 deselected"
    assert slow.returncode == 0 and re.search(rf"\b1 passed{deselected} in\b", said), said


def test_fast_and_slow_together_are_refused(tmp_path):
    (tmp_path / "test_tiered.py").write_text(TIERED_TESTS)
    refused = subprocess.run([sys.executable, "-m", "pytest", "-p", "tests.speeds", "--fast",
                              "--slow", "test_tiered.py"], cwd=tmp_path,
                             env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True,
                             text=True, timeout=120)
    assert refused.returncode == 4, refused.stdout + refused.stderr
    assert "give one of them, or neither" in refused.stderr, refused.stderr


def test_the_fast_tier_knows_the_programs_it_leaves_out():
    from tests.speeds import watched

    assert watched(["/usr/bin/bwrap", "--ro-bind", "/", "/", "python3", "x.py"]) == "bwrap"
    assert watched(["/usr/bin/bwrap", "--ro-bind", "/", "/", "true"]) is None  # the probe
    assert watched(["strace", "-f", "-qq", "-o", "/dev/null", "--", "true"]) is None
    assert watched("strace -f -o trace python3 x.py") == "strace"
    assert watched(["sh", "-c", "exec chromium --headless about:blank"]) == "chromium"
    assert watched(["sh", "-c", "chromium --headless about:blank"]) == "chromium"
    assert watched([sys.executable, "-m", "nbgrader", "autograde", "lesson2"]) == "nbgrader"
    assert watched([sys.executable, "-m", "jupyterlab", "--no-browser"]) == "jupyter-lab"
    assert watched([Path(sys.executable).parent / "checkpoint-lab", "lab"]) == "jupyter-lab"
    assert watched([sys.executable, "-m", "graders.cli", "lab", "--no-browser"]) == "jupyter-lab"
    assert watched([sys.executable, "-m", "graders.cli", "check", "x.ipynb"]) is None
    assert watched([sys.executable, "-c", "import nbgrader"]) is None
