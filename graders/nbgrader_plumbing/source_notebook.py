"""An authored exercise turned into an nbgrader source notebook (the instructor's version).

Each exercise is authored once, as ``exercises/src/NN_name.py`` (jupytext percent format, cell
headers carrying nbgrader's own metadata; see ``exercises/README.md``).
:func:`build_source_notebook` turns it into an nbgrader *source* notebook: answer cells whose
``checkpoint_lab`` metadata names ``solution_from`` / ``starter_from`` get ``### BEGIN
SOLUTION`` ... ``### END SOLUTION`` around the solution code, and keep the starter in
``checkpoint_lab.starter``; a locked code cell whose metadata names ``code_from`` gets that code
as it is (:func:`extract_code`). The student release comes from nbgrader's own
``generate_assignment`` (see :mod:`graders.nbgrader_plumbing.course`), whose ClearSolutions step
(:class:`graders.nbgrader_plumbing.preprocessors.ReleaseStarter`) puts each cell's starter in
place of its solution; :mod:`graders.nbgrader_plumbing.build` keeps ``exercises/`` in step with
that release.
"""

from __future__ import annotations

import ast
import os
import re
from pathlib import Path

import jupytext
import nbformat
from nbformat import NotebookNode

from graders.submission import parse_python

__all__ = [
    "ROOT",
    "ASSIGNMENT",
    "SOURCES_DIR",
    "EXERCISES_DIR",
    "KERNELSPEC",
    "BuildError",
    "authored_sources",
    "extract_code",
    "build_source_notebook",
]


def _checkout() -> Path:
    """The checkout whose ``exercises/src`` to build from: the one this package runs from (``pip
    install -e``), else ``CHECKPOINT_LAB_COURSE``, else the current folder (a package installed
    with pip, as on a JupyterHub: run ``checkpoint-lab course`` in the repository's folder)."""
    installed_from = Path(__file__).resolve().parents[2]
    for root in (installed_from, os.environ.get("CHECKPOINT_LAB_COURSE"), Path.cwd()):
        if root and (Path(root) / "exercises" / "src").is_dir():
            return Path(root)
    return installed_from


ROOT = _checkout()
ASSIGNMENT = "lesson2"
EXERCISES_DIR = ROOT / "exercises"
SOURCES_DIR = EXERCISES_DIR / "src"

#: The kernel every built notebook names.
KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
_AUTHORED_NAME = re.compile(r"^\d\d_[a-z0-9_]+\.py$")
_CELL_ID_BAD = re.compile(r"[^a-zA-Z0-9_-]")


class BuildError(Exception):
    """The authored exercise cannot be built; the message says where and why."""


def authored_sources(src_dir: Path = SOURCES_DIR) -> list[Path]:
    """The authored exercise files ``NN_name.py`` in ``src_dir``, in order."""
    return sorted(p for p in Path(src_dir).glob("*.py") if _AUTHORED_NAME.match(p.name))


# --- extracting code named by ``path:NAME`` --------------------------------------------------


def _top_level_names(node: ast.stmt) -> list[str]:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, ast.Assign):
        return [t.id for t in node.targets if isinstance(t, ast.Name)]
    if isinstance(node, (ast.AnnAssign, ast.AugAssign)) and isinstance(node.target, ast.Name):
        return [node.target.id]
    return []


def _segment(lines: list[str], node: ast.stmt) -> str:
    start = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
    return "\n".join(lines[start - 1 : node.end_lineno]).rstrip()


def _used_names(tree: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}


def _imports_needed(module: ast.Module, used: set[str], defined: set[str]) -> list[str]:
    """The file's top-level imports, narrowed to the names ``used`` by the extracted code."""
    needed = []
    for node in module.body:
        if isinstance(node, ast.Import):
            aliases = [a for a in node.names if (a.asname or a.name.split(".")[0]) in used]
            if aliases:
                needed.append("import " + ", ".join(
                    a.name + (f" as {a.asname}" if a.asname else "") for a in aliases))
        elif isinstance(node, ast.ImportFrom) and node.module != "__future__":
            aliases = [a for a in node.names
                       if (a.asname or a.name) in used and (a.asname or a.name) not in defined]
            if aliases:
                names = ", ".join(a.name + (f" as {a.asname}" if a.asname else "") for a in aliases)
                needed.append(f"from {'.' * node.level}{node.module or ''} import {names}")
    return needed


def extract_code(spec: str, root: Path = ROOT) -> str:
    """The code named by ``spec``: ``path:NAME[,NAME...]`` or ``path`` (relative to ``root``).

    ``NAME`` is a top-level ``def``, ``class`` or assignment, taken with its decorators, in the
    order given; the file's top-level imports and constants (simple assignments) that the
    extracted code uses come first. ``path``
    alone is the whole file minus its module docstring.
    """
    path_text, _, names_text = spec.partition(":")
    path = (Path(root) / path_text).resolve()
    if not path.is_file():
        raise BuildError(f"{spec!r}: no file {path_text} under {root}")
    text = path.read_text(encoding="utf-8")
    try:
        module = parse_python(text, str(path))
    except SyntaxError as err:
        raise BuildError(f"{spec!r}: {path_text} is not valid Python ({err})") from err
    lines = text.splitlines()
    if not names_text.strip():
        body = module.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            lines = lines[body[0].end_lineno:]
        return "\n".join(lines).strip() + "\n"
    wanted = [n.strip() for n in names_text.split(",") if n.strip()]
    by_name = {name: node for node in module.body for name in _top_level_names(node)}
    missing = [n for n in wanted if n not in by_name]
    if missing:
        raise BuildError(f"{spec!r}: {path_text} has no top-level {', '.join(missing)} "
                         f"(it defines {', '.join(sorted(by_name)) or 'nothing'})")
    nodes = list(dict.fromkeys(by_name[n] for n in wanted))
    used = set().union(*(_used_names(node) for node in nodes))
    # Module constants the extracted code uses come along, like its imports.
    constants = [node for node in module.body
                 if isinstance(node, (ast.Assign, ast.AnnAssign)) and node not in nodes
                 and set(_top_level_names(node)) & used]
    nodes = constants + nodes
    segments = [_segment(lines, node) for node in nodes]
    used = set().union(*(_used_names(node) for node in nodes))
    defined = set().union(*(_top_level_names(node) for node in nodes))
    imports = _imports_needed(module, used, defined)
    parts = (["\n".join(imports)] if imports else []) + segments
    return "\n\n\n".join(parts) + "\n"


# --- authored file -> nbgrader source notebook ----------------------------------------------


def _cell_id(grade_id: str | None, index: int) -> str:
    return _CELL_ID_BAD.sub("-", grade_id)[:64] if grade_id else f"cell-{index}"


def _graded_by_nbgrader(info: dict) -> bool:
    """Whether nbgrader records the cell: an answer, a test, a task or a locked cell."""
    return bool(info) and any(info.get(key) for key in ("grade", "solution", "locked", "task"))


def build_source_notebook(authored: Path, root: Path = ROOT) -> NotebookNode:
    """The nbgrader source notebook (instructor version) built from one authored file."""
    authored = Path(authored)
    try:
        nb = jupytext.read(authored, fmt="py:percent")
    except Exception as err:  # jupytext raises many kinds on a malformed file
        raise BuildError(f"{authored}: jupytext cannot read it ({err})") from err
    nb.metadata = NotebookNode(kernelspec=NotebookNode(KERNELSPEC),
                               language_info=NotebookNode(name="python"))
    seen: set[str] = set()
    for index, cell in enumerate(nb.cells):
        where = f"{authored.name}, cell {index + 1}"
        meta = cell.metadata
        grade_id = meta.get("nbgrader", {}).get("grade_id")
        if grade_id in seen:
            raise BuildError(f"{where}: grade_id {grade_id!r} is used twice")
        if grade_id:
            seen.add(grade_id)
        cell.id = _cell_id(grade_id, index)
        if not _graded_by_nbgrader(meta.get("nbgrader", {})):
            # A playground cell: its grade_id names only the cell id. nbgrader keeps no record
            # of such a cell, so autograde warned "does not exist in the database" per student.
            meta.pop("nbgrader", None)
        lab = meta.get("checkpoint_lab")
        if lab is None:
            continue
        if "code_from" in lab:
            if cell.cell_type != "code" or meta.get("nbgrader", {}).get("solution"):
                raise BuildError(f"{where}: checkpoint_lab.code_from belongs on locked code cells "
                                 "(answer cells name solution_from and starter_from)")
            cell.source = extract_code(lab["code_from"], root).rstrip("\n")
            del meta["checkpoint_lab"]
            continue
        if cell.cell_type != "code" or not meta.get("nbgrader", {}).get("solution"):
            raise BuildError(f"{where}: checkpoint_lab metadata belongs on answer (solution) "
                             "code cells only")
        if "solution_from" in lab:
            solution = extract_code(lab["solution_from"], root).rstrip("\n")
            cell.source = f"### BEGIN SOLUTION\n{solution}\n### END SOLUTION"
        elif "BEGIN SOLUTION" not in cell.source:
            raise BuildError(f"{where}: an answer cell needs checkpoint_lab.solution_from or a "
                             "### BEGIN SOLUTION / ### END SOLUTION region in its body")
        if "starter_from" in lab:
            starter = extract_code(lab["starter_from"], root).rstrip("\n")
        elif "starter" in lab:
            starter = str(lab["starter"]).rstrip("\n")
        else:
            raise BuildError(f"{where}: an answer cell needs checkpoint_lab.starter_from or "
                             "checkpoint_lab.starter (students get the starter, never a stub)")
        meta["checkpoint_lab"] = NotebookNode(starter=starter)
    nbformat.validate(nb)
    return nb
