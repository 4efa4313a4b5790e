"""The site's downloads, through the registries' own clients, kept in a cache folder.

``npm pack`` brings Pyodide's core files from the npm registry and ``pip download`` the kernel's
wheels from PyPI, each checked against the hash pinned in :mod:`graders.site.pins`. A file
already in the cache with the right hash is used as it is, so a second build needs no network.
"""

from __future__ import annotations

import base64
import hashlib
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

from graders.site.pins import (
    KERNEL_EXTENSION,
    KERNEL_WHEELS,
    PYODIDE,
    PYODIDE_FILES,
    PYTHON_VERSION,
)

__all__ = ["SiteError", "kernel_wheels", "pyodide_files"]


class SiteError(Exception):
    """The site cannot be built: says what was missing, where it was looked for, what to do."""


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _npm_integrity(path: Path) -> str:
    return "sha512-" + base64.b64encode(hashlib.sha512(path.read_bytes()).digest()).decode()


def _run(command: list[str], what: str) -> None:
    try:
        done = subprocess.run(command, capture_output=True, text=True, check=False)
    except FileNotFoundError:
        raise SiteError(f"{what}: `{command[0]}` is not installed (it comes with Node.js: "
                        "Debian/Ubuntu `sudo apt-get install npm`, or nodejs.org)") from None
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        raise SiteError(f"{what}: `{' '.join(command[:3])} ...` exited {done.returncode}: "
                        + " / ".join(tail))


def pyodide_files(cache: Path, dest: Path) -> Path:
    """Unpack Pyodide's core files (and its ``pyodide-lock.json``) into ``dest``; returns the
    lockfile's path. The npm tarball is fetched once into ``cache/npm``."""
    name, version = PYODIDE["name"], PYODIDE["version"]
    tarball = cache / "npm" / f"{name}-{version}.tgz"
    if not tarball.exists() or _npm_integrity(tarball) != PYODIDE["integrity"]:
        tarball.parent.mkdir(parents=True, exist_ok=True)
        tarball.unlink(missing_ok=True)
        _run(["npm", "pack", f"{name}@{version}", "--pack-destination", str(tarball.parent),
              "--silent"], f"fetching {name}@{version} from the npm registry")
        if not tarball.exists():
            raise SiteError(f"npm pack {name}@{version} left no {tarball.name} in {tarball.parent}")
        found = _npm_integrity(tarball)
        if found != PYODIDE["integrity"]:
            tarball.unlink()
            raise SiteError(f"{tarball.name} from the npm registry has integrity {found}, "
                            f"pinned {PYODIDE['integrity']} (graders/site/pins.py)")
    dest.mkdir(parents=True, exist_ok=True)
    wanted = {f"package/{f}": f for f in (*PYODIDE_FILES, "pyodide-lock.json")}
    with tarfile.open(tarball) as archive:
        for member in archive.getmembers():
            if member.name in wanted:
                with archive.extractfile(member) as src, (dest / wanted.pop(member.name)).open(
                        "wb") as out:
                    shutil.copyfileobj(src, out)
    if wanted:
        raise SiteError(f"{tarball.name} lacks {', '.join(sorted(wanted.values()))}")
    return dest / "pyodide-lock.json"


def _cached_wheel(folder: Path, name: str, version: str, sha256: str) -> Path | None:
    from packaging.utils import canonicalize_name, parse_wheel_filename

    for path in folder.glob("*.whl"):
        wheel_name, wheel_version, _, _ = parse_wheel_filename(path.name)
        if (canonicalize_name(wheel_name) == name and str(wheel_version) == version
                and _sha256(path) == sha256):
            return path
    return None


def kernel_wheels(cache: Path) -> tuple[list[Path], Path]:
    """The pinned kernel wheels and the kernel's extension wheel, from ``cache/wheels`` or else
    downloaded there from PyPI."""
    pins = (*KERNEL_WHEELS, KERNEL_EXTENSION)
    folder = cache / "wheels"
    folder.mkdir(parents=True, exist_ok=True)
    missing = [pin for pin in pins if _cached_wheel(folder, *pin) is None]
    if missing:
        requirements = folder / "requirements.txt"
        requirements.write_text("".join(f"{name}=={version} --hash=sha256:{sha}\n"
                                        for name, version, sha in missing), encoding="utf-8")
        _run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
              "--python-version", PYTHON_VERSION, "--require-hashes", "--disable-pip-version-check",
              "-q", "-d", str(folder), "-r", str(requirements)],
             f"downloading {len(missing)} wheels for the browser kernel from PyPI")
    found = [_cached_wheel(folder, *pin) for pin in pins]
    absent = [pin[0] for pin, path in zip(pins, found, strict=True) if path is None]
    if absent:
        raise SiteError(f"pip download left no matching wheel of {', '.join(absent)} in {folder}")
    wheels = [path for path in found if path is not None]
    return wheels[:-1], wheels[-1]
