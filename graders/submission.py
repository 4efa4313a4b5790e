"""The submission: the code under test, as source text or (for a self-check) live functions."""

from __future__ import annotations

import ast
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Submission", "REQUIRED", "defined_names", "parse_python"]

#: The two functions a submission must define at top level.
REQUIRED = ("save_checkpoint", "run_agent")


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

    @classmethod
    def from_source(cls, text: str, name: str = "submission", filename: str | None = None
                    ) -> Submission:
        """A submission from source text; ``name`` labels it in reports."""
        return cls(name=name, source=text, filename=filename or f"<{name}>")

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
            where = f" at line {err.lineno}" if err.lineno else ""
            code = f": `{err.text.strip()}`" if err.text and err.text.strip() else ""
            return f"Your code has a syntax error{where}{code} ({err.msg}), so it cannot run."
        except ValueError as err:  # null bytes
            return f"Your code cannot be read as Python ({err})."
        bound = defined_names(tree)
        if "*" in bound:
            return None  # a star import may define anything: let the runner tell
        missing = [f for f in REQUIRED if f not in bound]
        if missing:
            return _missing_message(missing)
        return None


def _missing_message(missing: list[str]) -> str:
    names = " and ".join(f"`{m}`" for m in missing)
    verb = "is" if len(missing) == 1 else "are"
    return (f"{names} {verb} not defined at the top level of your code: the grader calls "
            "`run_agent(task, tools, call_model, execute_tool)`, and `run_agent` saves through "
            "`save_checkpoint(state)`.")


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
