"""Build the exercises: authored jupytext files -> nbgrader source notebooks -> student release.

The authored file becomes an nbgrader source notebook in
:mod:`graders.nbgrader_plumbing.source_notebook`; the release comes from nbgrader's own
``generate_assignment`` in a course directory (:mod:`graders.nbgrader_plumbing.course`). This
module keeps the committed ``exercises/*.ipynb`` equal to that release:
``python -m graders.nbgrader_plumbing.build`` refreshes them;
``python -m graders.nbgrader_plumbing.build --check`` exits 1 when they differ from what the build
releases.

The names of :mod:`~graders.nbgrader_plumbing.source_notebook` (``extract_code``,
``build_source_notebook``, ``BuildError``, the paths) stay importable from here.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import nbformat
from nbformat import NotebookNode

from graders.nbgrader_plumbing.course import build_course
from graders.nbgrader_plumbing.source_notebook import (
    ASSIGNMENT,
    EXERCISES_DIR,
    KERNELSPEC,
    ROOT,
    SOURCES_DIR,
    BuildError,
    authored_sources,
    build_source_notebook,
    extract_code,
)

__all__ = [
    "release_and_reference",
    "ROOT",
    "ASSIGNMENT",
    "SOURCES_DIR",
    "EXERCISES_DIR",
    "BuildError",
    "authored_sources",
    "extract_code",
    "build_source_notebook",
    "clean_notebook",
    "notebook_text",
    "released_notebooks",
    "refresh_exercises",
    "stale_exercises",
    "main",
]

#: Cell metadata a released notebook may keep; everything else is stripped.
RELEASE_CELL_METADATA = ("nbgrader", "deletable", "editable", "tags")


# --- cleaning and writing notebooks ---------------------------------------------------------


def clean_notebook(nb: NotebookNode) -> NotebookNode:
    """``nb`` as committed: no outputs, no execution counts, only nbgrader's metadata.

    Notebook metadata keeps ``kernelspec`` and ``language_info.name``; cell metadata keeps
    ``nbgrader``, ``deletable``, ``editable`` and ``tags``.
    """
    nb = nbformat.from_dict(json.loads(json.dumps(nb)))
    language = nb.metadata.get("language_info", {}).get("name", "python")
    nb.metadata = NotebookNode(kernelspec=NotebookNode(nb.metadata.get("kernelspec", KERNELSPEC)),
                               language_info=NotebookNode(name=language))
    for cell in nb.cells:
        cell.metadata = NotebookNode(
            {k: v for k, v in cell.metadata.items() if k in RELEASE_CELL_METADATA})
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
        cell.pop("attachments", None)
    nb.nbformat, nb.nbformat_minor = 4, 5
    return nb


def notebook_text(nb: NotebookNode) -> str:
    """The text a notebook is committed as (nbformat's own layout, one trailing newline)."""
    return nbformat.writes(nb, version=4).rstrip("\n") + "\n"


def released_notebooks(src_dir: Path = SOURCES_DIR, root: Path = ROOT) -> dict[str, str]:
    """Build the course in a temporary folder and return ``{notebook file name: clean text}``.

    This runs nbgrader's own ``generate_assignment`` with the course's configuration, exactly as
    ``checkpoint-lab course`` does.
    """
    sources = authored_sources(src_dir)
    if not sources:
        raise BuildError(f"no authored exercises (NN_name.py) in {src_dir}")
    with tempfile.TemporaryDirectory(prefix="checkpoint-lab-build-") as tmp:
        course = build_course(Path(tmp) / "course", sources=sources, repo=root)
        release = course.release_dir
        return {path.name: notebook_text(clean_notebook(nbformat.read(path, as_version=4)))
                for path in sorted(release.glob("*.ipynb"))}


def refresh_exercises(dest: Path = EXERCISES_DIR, src_dir: Path = SOURCES_DIR,
                      root: Path = ROOT) -> list[Path]:
    """Write the released notebooks into ``dest`` (the committed ``exercises/``); return them."""
    written = []
    for name, text in released_notebooks(src_dir, root).items():
        path = Path(dest) / name
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


def stale_exercises(dest: Path = EXERCISES_DIR, src_dir: Path = SOURCES_DIR,
                    root: Path = ROOT) -> list[str]:
    """What differs between ``dest`` and what the build releases (empty when in sync)."""
    problems = []
    released = released_notebooks(src_dir, root)
    for name, text in released.items():
        path = Path(dest) / name
        if not path.exists():
            problems.append(f"{name}: not in {dest} (the build releases it)")
        elif path.read_text(encoding="utf-8") != text:
            problems.append(f"{name}: differs from what the build releases")
    for path in sorted(Path(dest).glob("*.ipynb")):
        if path.name not in released:
            problems.append(f"{path.name}: in {dest} but the build does not release it")
    return problems


def main(argv: list[str] | None = None) -> int:
    """``python -m graders.nbgrader_plumbing.build [--check]``."""
    parser = argparse.ArgumentParser(
        prog="python -m graders.nbgrader_plumbing.build",
        description="Refresh the released exercise notebooks in exercises/ from exercises/src/.")
    parser.add_argument("--check", action="store_true",
                        help="only compare; exit 1 when exercises/ is out of date")
    args = parser.parse_args(argv)
    try:
        if args.check:
            problems = stale_exercises()
            for line in problems:
                print(line)
            if problems:
                print("Run `python -m graders.nbgrader_plumbing.build` to refresh exercises/.")
            return 1 if problems else 0
        for path in refresh_exercises():
            print(f"wrote {path.relative_to(ROOT)}")
    except BuildError as err:
        print(f"python -m graders.nbgrader_plumbing.build: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())


def release_and_reference(notebook: str, root: Path = ROOT):
    """(starter, reference) answer cells of ``notebook``, from the release and the build."""
    from graders.checks import submission_from_notebook

    release = root / "exercises" / f"{notebook}.ipynb"
    starter = submission_from_notebook(nbformat.read(release, as_version=4), notebook)
    nb = build_source_notebook(root / "exercises" / "src" / f"{notebook}.py", root)
    for cell in nb.cells:
        cell.source = "\n".join(line for line in cell.source.splitlines()
                                if "BEGIN SOLUTION" not in line and "END SOLUTION" not in line)
    reference = submission_from_notebook(nb, notebook)
    return starter, reference
