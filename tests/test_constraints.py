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

import pytest
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from tests.test_project import _course, _pip_calls, _stub_venv, _tiny_project

ROOT = Path(__file__).resolve().parents[1]


def _pins() -> dict[str, str]:
    text = (ROOT / "constraints.txt").read_text(encoding="utf-8")
    return dict(line.split("#", 1)[0].strip().split("==", 1) for line in text.splitlines()
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


def test_each_pin_carries_the_requires_python_of_that_release():
    """``course.py pin`` writes each release's Requires-Python after its pin; course.py checks
    them before pip runs. Read again here from this environment's metadata of the same
    releases, so that the file cannot drift from what the releases say."""
    text = (ROOT / "constraints.txt").read_text(encoding="utf-8")
    written = dict(re.findall(r"^(\S+==\S+)  # Requires-Python (.+)$", text, re.M))
    assert len(written) > 100, "constraints.txt carries no Requires-Python: run course.py pin"
    wrong = []
    for name, pinned in _pins().items():
        needs = distribution(name).metadata.get("Requires-Python")
        if needs and written.get(f"{name}=={pinned}") != " ".join(needs.split()):
            wrong.append(f"{name}=={pinned}: {written.get(f'{name}=={pinned}')!r} != {needs!r}")
    assert not wrong, wrong


def test_course_py_refuses_a_pin_this_python_cannot_install_before_pip_runs(tmp_path):
    _tiny_project(tmp_path)
    (tmp_path / "constraints.txt").write_text(
        "# pinned\niniconfig==2.0.0  # Requires-Python >=3.7\n"
        "soupsieve==4.1.3  # Requires-Python >=3.99.5\n")
    venv = _stub_venv(tmp_path, pytest_too=False)
    failed = _course(tmp_path)
    assert failed.returncode != 0
    [line] = failed.stderr.strip().splitlines()
    assert re.search(r"constraints\.txt pins soupsieve==4\.1\.3, which needs Python >=3\.99\.5; "
                     r"this is Python 3\.\d+\.\d+, and nothing was installed", line), line
    assert _pip_calls(venv) == [], "pip must not start: the check is instant and offline"
    assert not (venv / ".checkpoint-lab-installed").exists()


def _wheel_needing_python(folder: Path, needs: str) -> Path:
    """``toonew-1.0``, a wheel whose Requires-Python is ``needs``."""
    import zipfile

    folder.mkdir(parents=True, exist_ok=True)
    wheel = folder / "toonew-1.0-py3-none-any.whl"
    info = "toonew-1.0.dist-info"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("toonew/__init__.py", "")
        archive.writestr(f"{info}/METADATA", "Metadata-Version: 2.1\nName: toonew\n"
                         f"Version: 1.0\nRequires-Python: {needs}\n")
        archive.writestr(f"{info}/WHEEL", "Wheel-Version: 1.0\nGenerator: test\n"
                         "Root-Is-Purelib: true\nTag: py3-none-any\n")
        archive.writestr(f"{info}/RECORD", "")
    return wheel


def _real_pip_venv(root: Path) -> Path:
    """``root/.venv`` without a pip of its own, running this environment's real pip."""
    import venv

    import pip

    venv.EnvBuilder(with_pip=False, symlinks=True).create(root / ".venv")
    site = next((root / ".venv" / "lib").glob("python3*/site-packages"))
    (site / "real_pip.pth").write_text(f"{Path(pip.__file__).parents[1]}\n")
    return root / ".venv"


@pytest.mark.install
@pytest.mark.parametrize("where", ["index", "find-links"])
def test_real_pip_offline_a_hand_written_pin_too_new_is_named_with_the_python(tmp_path, where):
    """A constraints file written by hand (no Requires-Python after the pin): pip itself finds
    the release too new, from a local index's ``data-requires-python`` or from the wheel's
    metadata, and course.py says so in one line."""
    import html

    _tiny_project(tmp_path)
    (tmp_path / "constraints.txt").write_text("# pinned by hand\ntoonew==1.0\n")
    _real_pip_venv(tmp_path)
    wheel = _wheel_needing_python(tmp_path / "wheels", ">=3.99")
    if where == "index":
        page = tmp_path / "simple" / "toonew" / "index.html"
        page.parent.mkdir(parents=True)
        page.write_text(f'<a href="{wheel.as_uri()}" data-requires-python="'
                        f'{html.escape(">=3.99")}">{wheel.name}</a>\n')
        env = {"PIP_INDEX_URL": (tmp_path / "simple").as_uri()}
    else:
        env = {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(wheel.parent)}
    failed = _course(tmp_path, **env, PIP_NO_CACHE_DIR="1", PIP_CONFIG_FILE="/dev/null")
    assert failed.returncode != 0
    [last] = failed.stderr.strip().splitlines()
    assert re.search(r"toonew(==1\.0)? needs Python >=3\.99, and this is Python 3\.\d+\.\d+",
                     last), failed.stderr
    assert "Traceback" not in failed.stderr
    assert not (tmp_path / ".venv" / ".checkpoint-lab-installed").exists()
