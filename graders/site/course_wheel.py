"""The course's own packages, ``graders`` and ``fake_llm``, as one wheel the browser kernel loads.

Written here with ``zipfile`` (the wheel format is a zip with three metadata files), so the
build needs no build backend and no network. It carries nothing outside them, and leaves out
of them what only hidden checks use (:data:`WITHHELD`). The wheel names only ``ipywidgets`` as a
requirement: the lessons and self-checks need nothing else the browser has not got, and the
desktop's requirements (JupyterLab, nbgrader, matplotlib) have no place in a browser tab. Its
version carries a hash of its contents, so a browser never keeps an older copy under the same name.
"""

from __future__ import annotations

import base64
import hashlib
import zipfile
from pathlib import Path

__all__ = ["DIST_NAME", "WITHHELD", "write_course_wheel"]

DIST_NAME = "checkpoint_lab"
PACKAGES = ("graders", "fake_llm")
#: What the site's wheel leaves out of the packages: a student's browser gets nothing a student
#: should not have. The scenarios that only hidden checks use (Level 4's ``release-audit``;
#: lesson 05 shows its turns from the recording in ``graders/data/teaching/``, see
#: `graders.teaching.parallel_turn.RecordedShape`). ``long-migration``, which Levels 2 and 3's
#: hidden checks use, stays: lesson 01 runs the lesson's loop on it live (its max-turns and
#: tokensUsed cells), and a desktop install carries it as well; tests/test_site.py holds the
#: wheel's scenarios to those a student's kernel runs. No file of ``solutions/`` is added.
WITHHELD = ("fake_llm/scenarios/release-audit.json",)
_STAMP = (2020, 2, 2, 0, 0, 0)


def _files(root: Path) -> list[Path]:
    found = []
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc" \
                    and path.relative_to(root).as_posix() not in WITHHELD:
                found.append(path)
    return found


def _digest(data: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def _metadata(version: str) -> dict[str, bytes]:
    return {
        "METADATA": (f"Metadata-Version: 2.1\nName: checkpoint-lab\nVersion: {version}\n"
                     "Summary: Checkpoint Lab's graders and fake model, for the browser kernel\n"
                     "Requires-Python: >=3.11\nRequires-Dist: ipywidgets\n").encode(),
        "WHEEL": b"Wheel-Version: 1.0\nGenerator: checkpoint-lab site\nRoot-Is-Purelib: true\n"
                 b"Tag: py3-none-any\n",
        "top_level.txt": "".join(f"{p}\n" for p in PACKAGES).encode(),
    }


def write_course_wheel(root: Path, folder: Path, version: str) -> Path:
    """Write ``checkpoint_lab-VERSION+HASH-py3-none-any.whl`` of ``root``'s packages into
    ``folder``; returns its path."""
    contents = {path.relative_to(root).as_posix(): path.read_bytes() for path in _files(root)}
    content_hash = hashlib.sha256()
    for name in sorted(contents):
        content_hash.update(name.encode() + b"\0" + contents[name] + b"\0")
    full_version = f"{version}+{content_hash.hexdigest()[:10]}"
    info = f"{DIST_NAME}-{full_version}.dist-info"
    contents |= {f"{info}/{name}": data for name, data in _metadata(full_version).items()}
    record = "".join(f"{name},sha256={_digest(data)},{len(data)}\n"
                     for name, data in contents.items()) + f"{info}/RECORD,,\n"
    contents[f"{info}/RECORD"] = record.encode()
    folder.mkdir(parents=True, exist_ok=True)
    wheel = folder / f"{DIST_NAME}-{full_version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in contents.items():
            entry = zipfile.ZipInfo(name, date_time=_STAMP)
            entry.external_attr = 0o644 << 16
            entry.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(entry, data)
    return wheel
