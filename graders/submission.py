"""The submission: the code under test, as source text or (for a self-check) live functions.

A source submission may be made of parts (`Part`: a student's answer cell, the lesson's loop the
grader adds): the runner gets one program, and a line of it is said as a line of its part
(:meth:`Submission.place`), so that a message names the cell and the line the student wrote.
"""

from __future__ import annotations

import ast
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from graders import load_errors
from graders.load_errors import REQUIRED

__all__ = ["Submission", "Part", "defined_names", "parse_python", "cell_of"]


@dataclass(frozen=True)
class Part:
    """One part of a source submission: ``code``, and ``where`` it comes from in words ("the
    answer cell l2_run_agent", "the lesson's loop (run_agent), which called your save")."""

    where: str
    code: str


@dataclass(frozen=True)
class Submission:
    """Python code that defines ``save_checkpoint`` and ``run_agent``.

    Make one with :meth:`from_source`, :meth:`from_file` or :meth:`from_functions`. A source
    submission is executed only inside the harness's runner process, never in the process that
    builds the ``Submission``.
    """

    name: str
    source: str | None = None
    filename: str = "<submission>"
    run_agent: Callable | None = None
    save_checkpoint: Callable | None = None
    #: (where, first line in ``source``) of each part, in order; empty for a single source.
    parts: tuple[tuple[str, int], ...] = ()

    @classmethod
    def from_source(cls, text: str, name: str = "submission", filename: str | None = None
                    ) -> Submission:
        """A submission from source text; ``name`` labels it in reports."""
        return cls(name=name, source=text, filename=filename or f"<{name}>")

    @classmethod
    def from_parts(cls, parts: list[Part], name: str = "submission",
                   filename: str = "<your answer cells>") -> Submission:
        """One program made of ``parts``, in order; its lines are said per part (`place`)."""
        text, starts, line = "", [], 1
        for part in parts:
            code = part.code if part.code.endswith("\n") or not part.code else part.code + "\n"
            starts.append((part.where, line))
            text += code
            line += code.count("\n")
        return cls(name=name, source=text, filename=filename, parts=tuple(starts))

    def place(self, line: int) -> tuple[str, int]:
        """(where, line there) of line ``line`` of the program: "your code" when it is one."""
        where, first = "your code", 1
        for part, start in self.parts:
            if start <= line:
                where, first = part, start
        return where, line - first + 1

    def locate(self, error: dict | None) -> dict | None:
        """``error`` (``{"line", ...}`` of the program) with ``line`` and ``where`` of its part."""
        if not isinstance(error, dict) or not self.parts or not isinstance(error.get("line"), int):
            return error
        if "where" in error:
            return error
        where, line = self.place(error["line"])
        return {**error, "line": line, "where": where}

    @classmethod
    def from_file(cls, path: str | Path) -> Submission:
        """A submission from a ``.py`` file (tracebacks name that file)."""
        path = Path(path)
        return cls(name=path.stem, source=path.read_text(encoding="utf-8"),
                   filename=str(path.resolve()))

    @classmethod
    def from_functions(cls, run_agent: Callable, save_checkpoint: Callable,
                       name: str = "your functions") -> Submission:
        """A submission made of live functions, for a student's self-check in their own kernel.

        In this in-process mode the current process forks the crash children itself, and
        ``run_agent`` finds ``save_checkpoint`` through its own module globals (a notebook's,
        typically). Grading never uses it: a verdict computed in the student's own process
        could be forged by the student's code, so nbgrader grades source submissions, run in a
        fresh runner process.
        """
        if not callable(run_agent) or not callable(save_checkpoint):
            raise TypeError("from_functions needs the two functions: run_agent, save_checkpoint")
        return cls(name=name, run_agent=run_agent, save_checkpoint=save_checkpoint,
                   filename=getattr(getattr(run_agent, "__code__", None), "co_filename",
                                    "<functions>"))

    @property
    def in_process(self) -> bool:
        """True for :meth:`from_functions` submissions."""
        return self.source is None

    def missing(self) -> list[str]:
        """The required functions the source binds nowhere (empty for live functions, a source
        Python cannot read, or one with a star import, which may define anything)."""
        if self.source is None:
            return []
        try:
            bound = defined_names(parse_python(self.source, self.filename))
        except (SyntaxError, ValueError):
            return []
        return [] if "*" in bound else [f for f in REQUIRED if f not in bound]

    def problem(self) -> str | None:
        """A reason this source cannot work, found without running it, or None.

        Catches syntax errors and a missing ``save_checkpoint`` or ``run_agent`` (a name the
        source never binds: no ``def``, assignment or import of it anywhere). What only running
        reveals (an exception at import time, a name bound to something that is not a function)
        the harness reports after loading it.
        """
        if self.source is None:
            return None
        try:
            tree = parse_python(self.source, self.filename)
        except SyntaxError as err:
            part, line = self.place(err.lineno) if err.lineno else (None, None)
            return load_errors.syntax_error(err.msg, line, err.text,
                                            part if self.parts else None)
        except ValueError as err:  # null bytes
            return f"Your code cannot be read as Python ({err})."
        bound = defined_names(tree)
        if "*" in bound:
            return None  # a star import may define anything: let the runner tell
        missing = [f for f in REQUIRED if f not in bound]
        return load_errors.missing(missing) if missing else None


#: CPython 3.11 keeps ast.parse's recursion counter in state the threads share: two threads
#: parsing at once can fail with "SystemError: AST constructor recursion depth mismatch"
#: (python/cpython#106905). Grading parses in several threads (one per notebook, per scenario).
_PARSE_LOCK = threading.Lock()


def parse_python(source: str, filename: str = "<unknown>") -> ast.Module:
    """``ast.parse(source)``, one thread at a time (raises SyntaxError or ValueError as it)."""
    with _PARSE_LOCK:
        return ast.parse(source, filename=filename)


def defined_names(code: str | ast.Module) -> set[str]:
    """Every name ``code`` binds anywhere (``def``, class, assignment, import, ``global``).

    The one answer to "does this code define ``save_checkpoint``?" for the grader and the
    checks: a name bound nowhere is surely missing; one bound somewhere runs, and what only
    running shows (a name bound to something that is not a function) the run reports.
    ``*`` is in the set when a star import may define anything.
    """
    tree = parse_python(code) if isinstance(code, str) else code
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.Global):
            names.update(node.names)
    return names


def cell_of(function) -> str | None:
    """The whole source of the cell (or file) that defined ``function``, as it was run."""
    import linecache

    filename = getattr(getattr(function, "__code__", None), "co_filename", None)
    if not filename:
        return None
    lines = linecache.getlines(filename)
    return "".join(lines) if lines else None
