"""constraints.txt installs on every Python that pyproject.toml says it supports (issue 28 item 0).

Debian 12's own Python is 3.11.2; a pin that needs 3.11.5 (soupsieve 4.x did) made the README's
quick start fail there after minutes of pip backtracking. Each pinned release's Requires-Python
is read from its metadata in this environment (course.py installs exactly the pins, so no network
is needed) and checked against the lowest Python that ``requires-python`` allows.
"""

from __future__ import annotations

import re
import tomllib
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from tests.test_project import _course, _pip_calls, _stub_venv, _tiny_project

ROOT = Path(__file__).resolve().parents[1]


def _pins() -> dict[str, str]:
    text = (ROOT / "constraints.txt").read_text(encoding="utf-8")
    return dict(line.strip().split("==", 1) for line in text.splitlines()
                if line.strip() and not line.startswith("#"))


def lowest_supported_python() -> Version:
    """The lowest release ``requires-python`` admits (``>=3.11`` -> 3.11.0)."""
    spec = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    floors = [Version(s.version) for s in SpecifierSet(spec) if s.operator in (">=", "==", "~=")]
    assert floors, f"requires-python {spec!r} names no lowest version"
    lowest = max(floors)
    return Version(".".join(map(str, (*lowest.release, 0, 0)[:3])))


def test_the_lowest_supported_python_is_read_from_pyproject():
    assert lowest_supported_python() == Version("3.11.0")


def test_every_pinned_release_installs_on_the_lowest_supported_python():
    lowest = lowest_supported_python()
    too_new, not_here = [], []
    for name, pinned in _pins().items():
        try:
            dist = distribution(name)
        except PackageNotFoundError:
            not_here.append(f"{name}=={pinned}")
            continue
        if Version(dist.version) != Version(pinned):
            not_here.append(f"{name}=={pinned} (installed: {dist.version})")
            continue
        needs = dist.metadata.get("Requires-Python")
        if needs and not SpecifierSet(needs).contains(lowest, prereleases=True):
            too_new.append(f"{name}=={pinned} needs Python {needs}")
    assert not not_here, ("this environment does not hold these pins, so their Requires-Python "
                          f"cannot be read here (run python3 course.py test): {not_here}")
    assert not too_new, (f"constraints.txt pins releases that Python {lowest} (pyproject.toml's "
                         f"requires-python) cannot install; pin older ones: {too_new}")


def test_the_check_finds_a_pin_too_new_for_debian_12():
    # the release that broke Debian 12, as this environment's metadata would have shown it
    assert not SpecifierSet(">=3.11.5").contains(lowest_supported_python())


#: What pip 23.0.1 (Debian 12) prints when a pin needs a newer Python (captured on Python 3.11.2).
PIP_TOO_NEW = (
    "ERROR: Ignored the following versions that require a different python version: "
    "3.0.2 Requires-Python >=3.11.5; 4.1.3 Requires-Python >=3.11.5; "
    "4.1.4 Requires-Python >=3.11.5\n"
    "ERROR: Could not find a version that satisfies the requirement soupsieve==4.1.3 "
    "(from versions: 0.4, 2.9.2, 2.10, 3.0, 3.0.1)\n"
    "ERROR: No matching distribution found for soupsieve==4.1.3\n")


def test_course_py_names_the_pin_and_the_python_in_one_line_when_pip_cannot_install_it(tmp_path):
    _tiny_project(tmp_path)
    (tmp_path / "constraints.txt").write_text("# pinned\nsoupsieve==4.1.3\n")
    venv = _stub_venv(tmp_path, pytest_too=False)
    failed = _course(tmp_path, PIP_STUB_EXIT="1", PIP_STUB_STDERR=PIP_TOO_NEW)
    assert failed.returncode != 0
    [line] = failed.stderr.strip().splitlines()
    assert re.search(r"soupsieve==4\.1\.3 needs Python >=3\.11\.5, and this is Python 3\.\d+\.\d+",
                     line), line
    assert "Traceback" not in failed.stderr and "ERROR:" not in failed.stderr
    [pins] = _pip_calls(venv)  # the project itself was not tried: the pins failed first
    assert "--no-deps" in pins and "-e" not in pins, pins
    assert not (venv / ".checkpoint-lab-installed").exists()


def test_course_py_shows_pip_s_own_words_when_it_cannot_read_them(tmp_path):
    _tiny_project(tmp_path)
    _stub_venv(tmp_path, pytest_too=False)
    failed = _course(tmp_path, PIP_STUB_EXIT="2", PIP_STUB_STDERR="something odd happened\n")
    assert "something odd happened" in failed.stderr
    assert failed.stderr.strip().splitlines()[-1].startswith("course.py: pip could not install")
