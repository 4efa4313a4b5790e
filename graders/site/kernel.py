"""The browser kernel's files: Pyodide, every wheel it loads at start, and the lockfile naming them.

Pyodide's ``pyodide-lock.json`` from npm names 356 packages whose wheels the npm package does not
carry (Pyodide's CDN serves them). The site's lockfile names only the wheels the site serves, each
with its real sha256, written by ``pyodide-lock`` (Pyodide's own library for the file):

- the pinned pure-Python wheels from PyPI (:data:`graders.site.pins.KERNEL_WHEELS`);
- the kernel extension's own wheels (``piplite``, ``pyodide_kernel``, and its stand-ins for
  ``ipykernel`` and ``widgetsnbextension``), which ``jupyterlite-pyodide-kernel``'s wheel
  carries;
- the course's wheel (:mod:`graders.site.course_wheel`).

Every one of them is loaded when the kernel starts (``loadPyodideOptions.packages``), so the
kernel never asks micropip to resolve anything, and ``%pip`` finds no index outside the site.
"""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

from graders.site.fetch import SiteError
from graders.site.pins import PYODIDE

__all__ = ["KERNEL_PLUGIN", "extension_wheels", "write_lockfile"]

#: The kernel extension's plugin id, under which ``jupyter-lite.json`` holds its settings.
KERNEL_PLUGIN = "@jupyterlite/pyodide-kernel-extension:kernel"
#: Where, in ``jupyterlite-pyodide-kernel``'s wheel, the wheels it ships for the kernel are.
_SHIPPED = "/share/jupyter/labextensions/@jupyterlite/pyodide-kernel-extension/static/pypi/"
#: The extension's stand-in wheels that the site loads (its ``widgetsnbextension`` 3.x stand-in
#: is for ipywidgets 7, which the course does not use).
_EXTENSION_WHEELS = ("piplite-", "pyodide_kernel-", "ipykernel-", "widgetsnbextension-4.")


def extension_wheels(extension_wheel: Path, folder: Path) -> list[Path]:
    """The wheels ``jupyterlite-pyodide-kernel`` ships for the kernel to load, taken out of its
    own wheel (``extension_wheel``) into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    found = []
    with zipfile.ZipFile(extension_wheel) as archive:
        for name in archive.namelist():
            base = name.rpartition("/")[2]
            if _SHIPPED in name and base.startswith(_EXTENSION_WHEELS) and base.endswith(".whl"):
                found.append(folder / base)
                found[-1].write_bytes(archive.read(name))
    if len(found) != len(_EXTENSION_WHEELS):
        raise SiteError(f"{extension_wheel.name} holds {[p.name for p in found]}; expected one "
                        f"wheel each of {', '.join(w.rstrip('-.') for w in _EXTENSION_WHEELS)}")
    return sorted(found)


def write_lockfile(npm_lock: Path, wheels: list[Path], folder: Path) -> list[str]:
    """Copy ``wheels`` into ``folder`` and write ``folder/pyodide-lock.json`` naming exactly
    them (Pyodide's own ``info`` kept); returns the package names, to load at kernel start."""
    from pyodide_lock import PyodideLockSpec
    from pyodide_lock.utils import add_wheels_to_spec

    copies = []
    for wheel in wheels:
        copies.append(folder / wheel.name)
        if copies[-1].resolve() != wheel.resolve():
            shutil.copyfile(wheel, copies[-1])
    # Pyodide 314's lockfile has no ``info.version``, which pyodide-lock 0.1.2 (PyPI's newest)
    # requires: give it one to read, and write ``info`` back exactly as Pyodide wrote it.
    info = json.loads(npm_lock.read_text(encoding="utf-8"))["info"]
    empty = PyodideLockSpec(info={"version": PYODIDE["version"], **info}, packages={})
    try:
        spec = add_wheels_to_spec(empty, copies, base_path=folder)
    except RuntimeError as err:  # a requirement no wheel provides
        raise SiteError(f"the browser kernel's wheels do not fit together: {err}") from None
    data = spec.model_dump()
    data["info"] = info
    (folder / "pyodide-lock.json").write_text(json.dumps(data, indent=1, sort_keys=True),
                                              encoding="utf-8")
    return sorted(spec.packages)
