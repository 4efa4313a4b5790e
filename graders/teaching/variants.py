"""The four loops the crash timeline toggles between, as real submissions.

Two toggles, two choices each:

- B only, in place: the starter, ``tests/fixtures/submissions/starter_fails_all.py``;
- A and B, temp + rename: the reference, ``solutions/level2_reference.py``;
- B only, temp + rename: the starter's ``run_agent`` with the reference's ``save_checkpoint``;
- A and B, in place: the reference's ``run_agent`` with the starter's ``save_checkpoint``.

The two middle loops are put together from the two files with ``ast`` (each toggle swaps one
function), so there is one copy of each piece of code. The files are read from the course's
source tree (the lessons run from a clone of it).
"""

from __future__ import annotations

import ast
import difflib
import types
from functools import cache
from pathlib import Path

from graders.submission import Submission

__all__ = [
    "SAVE_POINTS",
    "WRITE_MODES",
    "SOURCES",
    "VariantError",
    "source_path",
    "function_source",
    "load_function",
    "variant_name",
    "variant_source",
    "variant",
    "no_checkpoint",
    "NO_CHECKPOINT_SAVE",
    "toggle_diff",
]

#: The save-points toggle: save only at B, or at A and B.
SAVE_POINTS = ("B only", "A and B")
#: The write-mode toggle: overwrite checkpoint.json, or write a temp file and rename it.
WRITE_MODES = ("in place", "temp + rename")

#: The two files the variants come from, relative to the course's top folder.
SOURCES = {
    "starter": "tests/fixtures/submissions/starter_fails_all.py",
    "reference": "solutions/level2_reference.py",
}

_ROOT = Path(__file__).resolve().parents[2]

#: The save of a loop with no checkpoint at all: the scene lives in memory only.
NO_CHECKPOINT_SAVE = '''def save_checkpoint(state):
    """No checkpoint: the state stays in the process's memory and dies with it."""
'''


class VariantError(ValueError):
    """An unknown toggle value, or a source file the course's tree does not have."""


def source_path(name: str) -> Path:
    """The path of ``"starter"`` or ``"reference"`` in the course's source tree."""
    if name not in SOURCES:
        raise VariantError(f"unknown source {name!r}; the sources are {', '.join(SOURCES)}")
    path = _ROOT / SOURCES[name]
    if not path.is_file():
        raise VariantError(
            f"{SOURCES[name]} is not in {_ROOT}: the lesson reads it from the course's source "
            "tree. Run the lesson from a clone of the course (python3 course.py lab)."
        )
    return path


@cache
def _read(name: str) -> str:
    return source_path(name).read_text(encoding="utf-8")


def _top_level(name: str) -> tuple[list[str], dict[str, str]]:
    """(import and constant lines, {function name: its source}) of a source file."""
    text = _read(name)
    tree = ast.parse(text)
    header, functions = [], {}
    for node in tree.body:
        segment = ast.get_source_segment(text, node)
        if isinstance(node, ast.ImportFrom) and node.module == "__future__":
            continue
        if isinstance(node, ast.Import | ast.ImportFrom | ast.Assign | ast.AnnAssign):
            header.append(segment)
        elif isinstance(node, ast.FunctionDef):
            functions[node.name] = segment
    return header, functions


def function_source(name: str, function: str) -> str:
    """The source of ``function`` (``"save_checkpoint"`` or ``"run_agent"``) in ``name``."""
    _, functions = _top_level(name)
    if function not in functions:
        raise VariantError(f"{SOURCES[name]} defines no function {function!r}")
    return functions[function]


def load_function(name: str, function: str):
    """``function`` from ``name``'s file, loaded in this process (course code, not a student's)."""
    module = types.ModuleType(f"checkpoint_lab_{name}")
    module.__file__ = str(source_path(name))
    exec(compile(_read(name), module.__file__, "exec"), module.__dict__)  # noqa: S102
    return getattr(module, function)


def _check(save_points: str, write_mode: str) -> None:
    if save_points not in SAVE_POINTS:
        raise VariantError(f"save points must be one of {SAVE_POINTS}, not {save_points!r}")
    if write_mode not in WRITE_MODES:
        raise VariantError(f"write mode must be one of {WRITE_MODES}, not {write_mode!r}")


def variant_name(save_points: str, write_mode: str) -> str:
    """A short name: ``"B only, in place (the starter)"``."""
    _check(save_points, write_mode)
    name = f"{save_points}, {write_mode}"
    if (save_points, write_mode) == ("B only", "in place"):
        name += " (the starter)"
    elif (save_points, write_mode) == ("A and B", "temp + rename"):
        name += " (the reference)"
    return name


def _loop_from(save_points: str) -> str:
    return "starter" if save_points == "B only" else "reference"


def _save_from(write_mode: str) -> str:
    return "starter" if write_mode == "in place" else "reference"


def variant_source(save_points: str, write_mode: str) -> str:
    """The Python source of the loop with these two toggles."""
    _check(save_points, write_mode)
    loop, save = _loop_from(save_points), _save_from(write_mode)
    if loop == save:
        return _read(loop)
    header: list[str] = []
    for name in (save, loop):
        for line in _top_level(name)[0]:
            if line not in header:
                header.append(line)
    return "\n".join([
        f'"""{variant_name(save_points, write_mode)}: save_checkpoint from {SOURCES[save]}, '
        f'run_agent from {SOURCES[loop]}."""',
        "",
        *header,
        "",
        "",
        function_source(save, "save_checkpoint"),
        "",
        "",
        function_source(loop, "run_agent"),
        "",
    ])


def variant(save_points: str, write_mode: str) -> Submission:
    """The loop with these two toggles, as a harness `Submission`."""
    source = variant_source(save_points, write_mode)
    loop, save = _loop_from(save_points), _save_from(write_mode)
    name = variant_name(save_points, write_mode)
    filename = str(source_path(loop)) if loop == save else f"<{name}>"
    return Submission.from_source(source, name=name, filename=filename)


def no_checkpoint() -> Submission:
    """The reference loop with a save that writes nothing: the scene lives in memory only."""
    header = _top_level("reference")[0]
    source = "\n".join([
        '"""The reference loop with no checkpoint: the scene lives in memory only."""',
        "", *header, "", "", NO_CHECKPOINT_SAVE, "", function_source("reference", "run_agent"), "",
    ])
    return Submission.from_source(source, name="no checkpoint", filename="<no checkpoint>")


def _without_docstring(source: str) -> list[str]:
    lines = source.splitlines(keepends=True)
    body = ast.parse(source).body[0].body
    first = body[0] if body else None
    if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
            and isinstance(first.value.value, str)):
        del lines[first.lineno - 1:first.end_lineno]
    return lines


def toggle_diff(toggle: str) -> str:
    """What one toggle changes, as a unified diff of the one function it swaps.

    ``"save points"`` swaps ``run_agent`` ("B only" is the starter's, "A and B" the
    reference's); ``"write mode"`` swaps ``save_checkpoint``.
    """
    functions = {"save points": "run_agent", "write mode": "save_checkpoint"}
    if toggle not in functions:
        raise VariantError(f"the toggles are {', '.join(functions)}, not {toggle!r}")
    function = functions[toggle]
    before = _without_docstring(function_source("starter", function))
    after = _without_docstring(function_source("reference", function))
    old, new = ("B only", "A and B") if toggle == "save points" else ("in place", "temp + rename")
    return "".join(difflib.unified_diff(before, after, f"{function}, {old} (the starter)",
                                        f"{function}, {new} (the reference)", n=2))
