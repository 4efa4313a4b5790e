"""The lesson's own loops, which the crash timeline and the lessons crash for real.

The lessons teach on these loops, not on the exercise's: the starter (the code students fix in
Level 2) is first met in the exercise, and the reference (its fix) only in ``solutions/``.

One loop, `LESSON_LOOP`, written once, and two toggles, each changing only what it names:

- save points: ``"B only"``, ``"A only"`` or ``"A and B"`` keep or drop the loop's
  ``save_checkpoint(state)`` lines at save point A and at save point B, and nothing else
  (every variant counts ``tokensUsed`` the same way and sets ``pendingToolUse`` in memory);
- write mode: ``"in place"`` or ``"temp + rename"`` choose the lesson's `IN_PLACE_SAVE` or
  `ATOMIC_SAVE`.

`starter_reference_diff` is the one place the starter and the reference meet: the walkthrough a
student opens after the exercise (``solutions/02_two_latent_failures.walkthrough.md``) shows it.
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
    "LESSON_LOOP",
    "IN_PLACE_SAVE",
    "ATOMIC_SAVE",
    "VariantError",
    "source_path",
    "function_source",
    "load_function",
    "lesson_function",
    "variant_name",
    "variant_source",
    "variant",
    "no_checkpoint",
    "NO_CHECKPOINT_SAVE",
    "starter_reference_diff",
]

#: The save-points toggle: where the loop saves.
SAVE_POINTS = ("B only", "A only", "A and B")
#: The write-mode toggle: overwrite checkpoint.json, or write a temp file and rename it.
WRITE_MODES = ("in place", "temp + rename")

#: The exercise's two files, relative to the course's top folder (used only by the walkthrough).
SOURCES = {
    "starter": "tests/fixtures/02_two_latent_failures/starter.py",
    "reference": "solutions/02_two_latent_failures.py",
}

_ROOT = Path(__file__).resolve().parents[2]

_IMPORTS = "import json\nimport os\nimport tempfile\nfrom pathlib import Path"

#: The lesson's loop. The two lines under ``# Save point A`` and under ``# Save point B`` are the
#: ones the save-points toggle keeps or drops.
LESSON_LOOP = '''def run_agent(task, tools, call_model, execute_tool):
    state = {
        "version": 1,
        "task": task,
        "turns": 0,
        "tokensUsed": 0,
        "messages": [{"role": "user", "content": task}],
        "pendingToolUse": None,
    }
    while True:
        response = call_model(tools=tools, messages=state["messages"])
        state["tokensUsed"] += response["usage"]["output_tokens"]
        if response["stop_reason"] != "tool_use":
            return state
        call = next(b for b in response["content"] if b["type"] == "tool_use")
        state["messages"].append({"role": "assistant", "content": response["content"]})
        state["pendingToolUse"] = {"id": call["id"], "name": call["name"], "input": call["input"]}
        # Save point A: the call is named; it has not run yet.
        save_checkpoint(state)
        output = execute_tool(call["name"], call["input"])
        state["messages"].append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": call["id"], "content": output}]})
        state["pendingToolUse"] = None
        state["turns"] += 1
        # Save point B: its result is recorded.
        save_checkpoint(state)
'''

#: The lesson's in-place save: the new bytes go straight into checkpoint.json.
IN_PLACE_SAVE = '''def save_checkpoint(state):
    Path("checkpoint.json").write_text(json.dumps(state))
'''

#: The lesson's atomic save: a temp file beside checkpoint.json, then one rename.
ATOMIC_SAVE = '''def save_checkpoint(state):
    folder = Path("checkpoint.json").resolve().parent
    with tempfile.NamedTemporaryFile("w", dir=folder, prefix="checkpoint.", suffix=".tmp",
                                     delete=False) as temp:
        json.dump(state, temp)
    os.replace(temp.name, "checkpoint.json")
'''

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
    """A short name: ``"B only, in place"``."""
    _check(save_points, write_mode)
    return f"{save_points}, {write_mode}"


def lesson_function(function: str, *, save_points: str = "A and B",
                    write_mode: str = "temp + rename") -> str:
    """The source of the lesson's ``"run_agent"`` (with these save points) or
    ``"save_checkpoint"`` (with this write mode)."""
    _check(save_points, write_mode)
    if function == "save_checkpoint":
        return IN_PLACE_SAVE if write_mode == "in place" else ATOMIC_SAVE
    if function != "run_agent":
        raise VariantError(f"the lesson's loop has run_agent and save_checkpoint, not {function!r}")
    keep = {"A": save_points in ("A only", "A and B"), "B": save_points in ("B only", "A and B")}
    lines: list[str] = []
    skip = False
    for line in LESSON_LOOP.splitlines(keepends=True):
        marker = next((p for p in "AB" if f"# Save point {p}" in line), None)
        if skip or (marker and not keep[marker]):
            skip = not skip  # drop the marker line and the save under it
            continue
        lines.append(line)
    return "".join(lines)


def variant_source(save_points: str, write_mode: str) -> str:
    """The Python source of the lesson's loop with these two toggles."""
    _check(save_points, write_mode)
    return "\n".join([
        f'"""The lesson loop: {variant_name(save_points, write_mode)}."""',
        "",
        _IMPORTS,
        "",
        "",
        lesson_function("save_checkpoint", write_mode=write_mode),
        "",
        lesson_function("run_agent", save_points=save_points),
    ])


def variant(save_points: str, write_mode: str) -> Submission:
    """The lesson's loop with these two toggles, as a harness `Submission`."""
    name = variant_name(save_points, write_mode)
    return Submission.from_source(variant_source(save_points, write_mode), name=name,
                                  filename=f"<lesson loop: {name}>")


def no_checkpoint() -> Submission:
    """The lesson's loop with a save that writes nothing: the scene lives in memory only."""
    source = "\n".join([
        '"""The lesson loop with no checkpoint: the scene lives in memory only."""',
        "", _IMPORTS, "", "", NO_CHECKPOINT_SAVE, "", LESSON_LOOP,
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


def _ended(lines: list[str]) -> list[str]:
    """``lines`` with the last one ended by a newline, as a diff of whole lines needs."""
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    return lines


def starter_reference_diff(function: str) -> str:
    """What the reference changes in the starter's ``function``, as a unified diff.

    For the walkthrough after the exercise (``solutions/02_two_latent_failures.walkthrough.md``),
    never a lesson.
    """
    if function not in ("run_agent", "save_checkpoint"):
        raise VariantError(f"the exercise's functions are run_agent and save_checkpoint, not "
                           f"{function!r}")
    before, after = (_ended(_without_docstring(function_source(name, function)))
                     for name in ("starter", "reference"))
    return "".join(difflib.unified_diff(before, after, f"{function} (the starter)",
                                        f"{function} (the reference)", n=2))
