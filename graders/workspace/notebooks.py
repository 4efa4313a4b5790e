"""The student's workspace: their own copies of the course's notebooks.

The course ships its notebooks in ``lessons/`` and ``exercises/``. A student never edits those;
``checkpoint-lab lab`` copies them into a workspace (``workspace/`` beside them, unless told
otherwise) and the student works there, so ``git pull`` or a reinstall never touches an answer.

Layout of a workspace::

    lessons/NN_name.ipynb              the lesson notebooks
    exercises/lesson2/NN_name.ipynb    the exercises (the nbgrader assignment ``lesson2``)
    backups/                           the student's copies that ``reset`` replaced
    .checkpoint-lab/manifest.json      which released files were delivered, and their hashes

A released notebook is copied in once. A file the student already has is never overwritten, and
a notebook the student deleted is not brought back (``reset`` does that); a notebook the course
ships later is added at the next sync.

A copy differs from the release in two places: its ``language_info`` metadata is the kernel's
(this Python's), so JupyterLab does not mark a notebook modified the moment its kernel starts,
and its links to the course's other notebooks point where those are in the workspace (the
shipped notebooks link as the repository lays them out: `graders.workspace.links`).
`before_save` is the course's pre-save hook (`graders.workspace.jupyter_extension` registers it
in any JupyterLab started in the course's environment): a saved notebook keeps a one-line "run
this cell" in place of each widget, which a reopened notebook could not show.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import sys
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from graders.workspace.links import WORKSPACE_EXERCISES, relink

__all__ = [
    "ASSIGNMENT",
    "Released",
    "ResetResult",
    "SyncReport",
    "Workspace",
    "WIDGET_HINT",
    "WorkspaceError",
    "before_save",
    "course_root",
    "delivered_bytes",
    "kernel_language_info",
    "default_workspace",
    "released_notebooks",
]

#: The nbgrader assignment the exercises belong to (the folder they live in, in a workspace).
ASSIGNMENT = "lesson2"

_MANIFEST = ".checkpoint-lab/manifest.json"


class WorkspaceError(Exception):
    """Something about the course or the workspace that the user has to fix; says what to do."""


@dataclass(frozen=True)
class Released:
    """One notebook as the course ships it: where it comes from and where it goes."""

    #: the shipped file, e.g. ``<course>/exercises/02_two_latent_failures.ipynb``
    source: Path
    #: its place in a workspace, e.g. ``exercises/lesson2/02_two_latent_failures.ipynb``
    relpath: str

    @property
    def name(self) -> str:
        """The notebook's name without ``.ipynb``, e.g. ``02_two_latent_failures``."""
        return Path(self.relpath).stem


@dataclass
class SyncReport:
    """What one sync did: paths relative to the workspace."""

    added: list[str] = field(default_factory=list)
    #: the student already had a file of that name: left alone
    kept: list[str] = field(default_factory=list)
    #: the student's copy is kept, but the course now ships a different release of it
    newer_release: list[str] = field(default_factory=list)
    #: delivered once, then deleted by the student: not brought back
    deleted: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        """One line per thing the student should know about, in plain words."""
        out = [f"added {p}" for p in self.added]
        out += [
            f"{p}: the course has a newer version; yours is kept "
            f"(`checkpoint-lab reset {Path(p).stem}` takes the new one and backs yours up)"
            for p in self.newer_release
        ]
        out += [
            f"{p} was deleted; `checkpoint-lab reset {Path(p).stem}` brings it back"
            for p in self.deleted
        ]
        return out


@dataclass(frozen=True)
class ResetResult:
    """What ``reset`` did: the notebook put back, and where the student's version went."""

    path: Path
    backup: Path | None  #: None when there was nothing to keep (missing, or already as released)


def course_root() -> Path:
    """The folder that holds the course's ``lessons/`` and ``exercises/``.

    ``CHECKPOINT_LAB_COURSE`` names it explicitly; otherwise it is the checkout the ``graders``
    package was installed from (``pip install -e .``), the current folder, or the repository
    folder of a repo2docker image (``REPO_DIR``) when the package was installed with pip.
    """
    env = os.environ.get("CHECKPOINT_LAB_COURSE")
    candidates = [Path(env)] if env else [
        Path(__file__).resolve().parents[2], Path.cwd(),
        *([Path(os.environ["REPO_DIR"])] if os.environ.get("REPO_DIR") else [])]
    for root in candidates:
        if (root / "lessons").is_dir() and (root / "exercises").is_dir():
            return root
    where = env or str(candidates[0])
    raise WorkspaceError(
        f"cannot find the course's lessons/ and exercises/ folders in {where}; run from a "
        "checkout of Checkpoint Lab installed with `pip install -e .` (python3 course.py lab "
        "does that), or set CHECKPOINT_LAB_COURSE to the checkout's folder"
    )


def default_workspace(root: Path | None = None) -> Path:
    """Where a student works unless they say otherwise: ``workspace/`` in the course's folder."""
    return (root or course_root()) / "workspace"


def released_notebooks(root: Path | None = None) -> list[Released]:
    """Every notebook the course ships to students, lessons first, in name order."""
    root = root or course_root()
    found = [Released(p, f"lessons/{p.name}") for p in sorted((root / "lessons").glob("*.ipynb"))]
    found += [
        Released(p, f"exercises/{ASSIGNMENT}/{p.name}")
        for p in sorted((root / "exercises").glob("*.ipynb"))
    ]
    return found


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def kernel_language_info() -> dict:
    """The ``language_info`` the workspace's kernel (ipykernel on this Python) reports."""
    return {
        "codemirror_mode": {"name": "ipython", "version": 3},
        "file_extension": ".py",
        "mimetype": "text/x-python",
        "name": "python",
        "nbconvert_exporter": "python",
        "pygments_lexer": "ipython3",
        "version": ".".join(str(n) for n in sys.version_info[:3]),
    }


def delivered_bytes(source: Path, exercises: str = WORKSPACE_EXERCISES) -> bytes:
    """A released notebook as the workspace gets it: with the kernel's ``language_info``, and
    its links to the course's other notebooks pointing where they are in a workspace
    (`graders.workspace.links`), or where a layout that keeps the exercises in ``exercises``
    has them (``"lesson2"``: a hub's home)."""
    data = source.read_bytes()
    try:
        notebook = json.loads(data)
        notebook["metadata"]["language_info"] = kernel_language_info()
        relink(notebook, f"{source.parent.name}/{source.name}", exercises)
    except (ValueError, KeyError, TypeError, AttributeError):
        return data  # not a notebook we can read: copied as it is
    return (json.dumps(notebook, indent=1, sort_keys=True, ensure_ascii=False) + "\n").encode()


def _delivered_sha256(source: Path) -> str:
    return hashlib.sha256(delivered_bytes(source)).hexdigest()


def _copy_release(source: Path, dest: Path) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{dest.name}.copy-tmp")
    tmp.write_bytes(delivered_bytes(source))
    os.replace(tmp, dest)


#: What a saved notebook shows in place of a widget that did not say what it is.
WIDGET_HINT = "Run this cell to see the widget: widgets need the running kernel."
_WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


def _uses_the_course(nb: dict, keys: tuple[str, ...]) -> bool:
    """Whether ``nb`` is one of the course's notebooks: a cell imports ``graders``, or an output
    carries one of the course's metadata ``keys`` (a widget's hint, a hint's counts)."""
    for cell in nb.get("cells", []):
        if not isinstance(cell, dict):
            continue
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else str(source)
        if re.search(r"^\s*(from|import)\s+graders\b", source, re.M):
            return True
        if any(isinstance(o, dict) and set(keys) & set(o.get("metadata") or {})
               for o in cell.get("outputs") or []):
            return True
    return False


def before_save(model: dict, **_kwargs) -> None:
    """Jupyter's pre-save hook: each widget output becomes its one-line "run this cell" hint.

    A widget's state lives in the kernel, so a reopened notebook cannot draw it and JupyterLab
    says "Error displaying widget: model not found". Only the course's notebooks are changed (a
    cell imports ``graders``, or an output is one of its widgets or hints). The course's widgets
    name their hint in the output's metadata (`graders.teaching._fallback.RERUN_KEY`; an empty
    hint drops the output); any other widget gets `WIDGET_HINT`. The hint counts are kept in the
    notebook's metadata (`graders.hint_counts.record_hints`). Only the file changes: the
    notebook on screen keeps its live widgets.
    """
    from graders.hint_counts import METADATA_KEY, record_hints
    from graders.teaching._fallback import RERUN_KEY

    if model.get("type") != "notebook" or not isinstance(model.get("content"), dict):
        return
    if not _uses_the_course(model["content"], (RERUN_KEY, METADATA_KEY)):
        return  # another notebook in the same environment: saved as JupyterLab gives it
    record_hints(model["content"])  # how many hints were opened, into the notebook's metadata
    for cell in model["content"].get("cells", []):
        outputs = cell.get("outputs") if isinstance(cell, dict) else None
        if not outputs:
            continue
        kept = []
        for output in outputs:
            data = output.get("data") if isinstance(output, dict) else None
            if not isinstance(data, dict):
                kept.append(output)
                continue
            metadata = output.get("metadata") or {}
            hint = metadata.get(RERUN_KEY, WIDGET_HINT if _WIDGET_MIME in data else None)
            if hint is None:
                kept.append(output)
            elif hint:
                kept.append({**output, "data": {"text/plain": hint},
                             "metadata": {RERUN_KEY: hint}})
        cell["outputs"] = kept


class Workspace:
    """A student's workspace folder (created when first synced)."""

    def __init__(self, path: Path | str, course: Path | None = None):
        self.path = Path(path).expanduser().resolve()
        self.course = course or course_root()
        if self.path.exists() and not self.path.is_dir():
            raise WorkspaceError(f"{self.path} is a file, not a folder; pick another --workspace")
        if self.path == self.course or self.path in self.course.parents:
            raise WorkspaceError(
                f"the workspace {self.path} would hold the course's own files; "
                "pick a folder of its own, e.g. --workspace workspace"
            )
        for shipped in ("lessons", "exercises"):
            folder = (self.course / shipped).resolve()
            if self.path == folder or folder in self.path.parents:
                raise WorkspaceError(
                    f"the workspace {self.path} is inside the course's {shipped}/ folder; "
                    "pick a folder outside it, e.g. --workspace workspace"
                )

    # -- the manifest -------------------------------------------------------------------------

    @property
    def state_dir(self) -> Path:
        """``.checkpoint-lab/``: the workspace's own bookkeeping (hidden in JupyterLab)."""
        return self.path / ".checkpoint-lab"

    @property
    def backups_dir(self) -> Path:
        """``backups/``: where ``reset`` keeps the student's replaced copies."""
        return self.path / "backups"

    def _read_manifest(self) -> dict[str, dict[str, str]]:
        path = self.path / _MANIFEST
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            delivered = data["delivered"]
            if isinstance(delivered, dict):
                return delivered
        except (OSError, ValueError, KeyError, TypeError):
            pass
        return {}

    def _write_manifest(self, delivered: dict[str, dict[str, str]]) -> None:
        path = self.path / _MANIFEST
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps({"delivered": delivered}, indent=1, sort_keys=True) + "\n",
                       encoding="utf-8")
        os.replace(tmp, path)

    # -- the two operations ---------------------------------------------------------------------

    def sync(self) -> SyncReport:
        """Copy in every released notebook not yet delivered; never overwrite the student's."""
        try:
            self.path.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise WorkspaceError(f"cannot create the workspace {self.path}: {err.strerror}; "
                                 "pick a folder you can write with --workspace DIR") from err
        delivered = self._read_manifest()
        report = SyncReport()
        for item in released_notebooks(self.course):
            dest = self.path / item.relpath
            shipped = _sha256(item.source)
            record = delivered.get(item.relpath)
            if record is None:
                if dest.exists():
                    report.kept.append(item.relpath)
                else:
                    _copy_release(item.source, dest)
                    report.added.append(item.relpath)
                delivered[item.relpath] = {"sha256": shipped}
            elif not dest.exists():
                report.deleted.append(item.relpath)
            elif (record.get("sha256") != shipped
                  and _sha256(dest) not in (shipped, _delivered_sha256(item.source))):
                report.newer_release.append(item.relpath)
        self._write_manifest(delivered)
        return report

    def find(self, name: str) -> Released:
        """The released notebook that ``name`` means: a name, a file name, or a path to it."""
        wanted = Path(name.strip()).name
        wanted = wanted[: -len(".ipynb")] if wanted.endswith(".ipynb") else wanted
        notebooks = released_notebooks(self.course)
        for item in notebooks:
            if item.name == wanted:
                return item
        names = ", ".join(item.name for item in notebooks) or "none (the course ships no notebooks)"
        raise WorkspaceError(
            f"{name!r} is not a notebook of the course; the notebooks are: {names}")

    def reset(self, name: str) -> ResetResult:
        """Put one notebook back to its released state, keeping the student's copy in backups/."""
        item = self.find(name)
        dest = self.path / item.relpath
        backup = None
        if dest.exists() and _sha256(dest) not in (_sha256(item.source),
                                                   _delivered_sha256(item.source)):
            stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
            backup = self.backups_dir / f"{item.name}.{stamp}.ipynb"
            n = 1
            while backup.exists():
                n += 1
                backup = self.backups_dir / f"{item.name}.{stamp}-{n}.ipynb"
            backup.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(dest, backup)
        _copy_release(item.source, dest)
        delivered = self._read_manifest()
        delivered[item.relpath] = {"sha256": _sha256(item.source)}
        self._write_manifest(delivered)
        return ResetResult(dest, backup)
