"""``build_site``: the course as a static JupyterLite site, built by ``jupyter lite build``.

The build stages a JupyterLite project in a temporary folder and lets ``jupyterlite-core`` make
the site from it:

- ``static/pyodide/``: Pyodide's core files, the kernel's wheels and their lockfile
  (:mod:`graders.site.kernel`), put into the site once it is built; ``pyodideUrl`` points the
  kernel at it, in place of its default CDN;
- ``files/``: the released notebooks, laid out as in a student's workspace (``lessons/``,
  ``exercises/lesson2/``);
- ``jupyter_lite_config.json``: two JupyterLab extensions only, from their pinned wheels (the
  Pyodide kernel's and ipywidgets' manager), never whatever else this Python has installed
  (nbgrader's would ask a server that is not there);
- ``jupyter-lite.json`` and ``overrides.json``: the kernel loads every wheel at start and never
  looks for PyPI; JupyterLab fetches no news and checks for no update.

Nothing in the build or the site fetches anything: the downloads (:mod:`graders.site.fetch`) come
first, into the cache, and the site serves every file it needs itself.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from graders.site.course_wheel import write_course_wheel
from graders.site.fetch import SiteError, kernel_wheels, pyodide_files
from graders.site.kernel import KERNEL_PLUGIN, extension_wheels, write_lockfile
from graders.site.notebooks import write_contents

__all__ = ["SiteReport", "build_site", "default_cache"]

_SETTINGS = {
    "@jupyterlab/apputils-extension:notification": {"fetchNews": "false",
                                                    "checkForUpdates": False},
}


@dataclass
class SiteReport:
    """What one build made."""

    output: Path
    notebooks: list[str] = field(default_factory=list)
    packages: list[str] = field(default_factory=list)
    seconds: float = 0.0
    size_bytes: int = 0


def default_cache(root: Path) -> Path:
    """Where downloads are kept between builds: ``.site-cache/`` in the course's folder."""
    return root / ".site-cache"


def _write_json(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


def _stage_kernel(root: Path, cache: Path, stage: Path) -> tuple[list[str], list[str]]:
    """Stage ``static/pyodide/`` (copied into the site once built); the packages the kernel
    loads, and the wheels of the two JupyterLab extensions the site has."""
    folder = stage / "static" / "pyodide"
    npm_lock = pyodide_files(cache, folder)
    shutil.move(npm_lock, stage / "npm-pyodide-lock.json")
    wheels, extension = kernel_wheels(cache)
    widgets = next(w for w in wheels if w.name.startswith("jupyterlab_widgets-"))
    wheels += [*extension_wheels(extension, stage / "extension-wheels"),
               write_course_wheel(root, stage / "course-wheel", _course_version(root))]
    packages = write_lockfile(stage / "npm-pyodide-lock.json", wheels, folder)
    return packages, [str(extension), str(widgets)]


def _course_version(root: Path) -> str:
    import tomllib

    with (root / "pyproject.toml").open("rb") as f:
        return tomllib.load(f)["project"]["version"]


def _stage_config(stage: Path, packages: list[str], extensions: list[str]) -> None:
    _write_json(stage / "jupyter_lite_config.json", {"LiteBuildConfig": {
        "apps": ["lab"],
        "contents": ["files"],
        "ignore_sys_prefix": ["federated_extensions"],
        "federated_extensions": extensions,
        "no_sourcemaps": True,
        "no_unused_shared_packages": True,
    }})
    _write_json(stage / "jupyter-lite.json", {
        "jupyter-lite-schema-version": 0,
        "jupyter-config-data": {
            "appName": "Checkpoint Lab",
            "litePluginSettings": {KERNEL_PLUGIN: {
                "pyodideUrl": "./static/pyodide/pyodide.mjs",
                "disablePyPIFallback": True,
                "loadPyodideOptions": {"packages": packages},
            }},
        },
    })
    _write_json(stage / "overrides.json", _SETTINGS)


def _jupyter_lite_build(stage: Path, output: Path) -> None:
    command = [sys.executable, "-m", "jupyterlite_core", "build", "--lite-dir", str(stage),
               "--output-dir", str(output)]
    done = subprocess.run(command, cwd=stage, capture_output=True, text=True, check=False)
    if done.returncode != 0 or not (output / "jupyter-lite.json").exists():
        tail = (done.stdout + done.stderr).strip().splitlines()[-12:]
        raise SiteError(f"jupyter lite build exited {done.returncode}:\n  " + "\n  ".join(tail))


def _clear(output: Path) -> None:
    if not output.exists():
        return
    if output.is_dir() and not any(output.iterdir()):
        return
    if not (output / "jupyter-lite.json").exists():
        raise SiteError(f"{output} exists and is not a site this command built (no "
                        "jupyter-lite.json in it): give an empty or new folder")
    shutil.rmtree(output)


def _tools_problem() -> str | None:
    import importlib.util

    missing = [name for name in ("jupyterlite_core", "pyodide_lock", "pkginfo")
               if importlib.util.find_spec(name) is None]
    if missing:
        return (f"the site's build tools are not installed ({', '.join(missing)} missing): "
                "pip install -e '.[site]' in the course's folder")
    return None


def _favicon(output: Path) -> None:
    """Jupyter's icon as ``/favicon.ico``: a browser asks for it at the site's root, and a static
    host logged a 404 for every visit."""
    try:
        import jupyter_server
    except ImportError:  # the site's tools come with JupyterLab; without it there is no icon
        return
    icon = Path(jupyter_server.__file__).resolve().parent / "static" / "favicon.ico"
    if icon.is_file() and not (output / "favicon.ico").exists():
        shutil.copyfile(icon, output / "favicon.ico")


def build_site(root: Path, output: Path, cache: Path | None = None) -> SiteReport:
    """Build the course in ``root`` as a static site in ``output`` (replaced if it is a site
    built before); downloads are kept in ``cache`` (default ``root/.site-cache``)."""
    problem = _tools_problem()
    if problem:
        raise SiteError(problem)
    started = time.monotonic()
    cache = (cache or default_cache(root)).resolve()
    output = output.resolve()
    _clear(output)
    report = SiteReport(output)
    with tempfile.TemporaryDirectory(prefix="checkpoint-lab-site-") as tmp:
        stage = Path(tmp)
        report.packages, extensions = _stage_kernel(root, cache, stage)
        report.notebooks = write_contents(root, stage / "files")
        _stage_config(stage, report.packages, extensions)
        _jupyter_lite_build(stage, output)
        shutil.copytree(stage / "static" / "pyodide", output / "static" / "pyodide",
                        dirs_exist_ok=True)
    (output / ".nojekyll").touch()  # GitHub Pages serves it as it is (no Jekyll)
    _favicon(output)
    report.seconds = time.monotonic() - started
    report.size_bytes = sum(p.stat().st_size for p in output.rglob("*") if p.is_file())
    return report
