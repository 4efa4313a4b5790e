"""What a student reads when their code cannot be loaded: one module, every observer's words.

Whatever found it (the parser before any run, the sandbox's bootstrap, the in-process recorder,
the forking harness's runner), a submission that does not define the two functions the grader
calls (:data:`REQUIRED`), that calls ``sys.exit()`` or raises while it is being loaded, or whose
top level never finishes or ends the process, is told so here, in the lesson's words, and
:func:`describe_error` says an exception of the student's code in one line. Pure wording: it
imports nothing of the grader, so the observers, the judge and the checks all use it.
"""

from __future__ import annotations

from typing import Any

__all__ = ["REQUIRED", "describe_error", "missing", "missing_in_cells", "syntax_error",
           "cell_unreadable", "not_defined_in_cell",
           "exit_while_loading", "raised_while_loading", "hung_while_loading",
           "died_while_loading", "runner_message"]

#: The two functions a submission must define at top level.
REQUIRED = ("save_checkpoint", "run_agent")

_CALLED = ("the grader calls `run_agent(task, tools, call_model, execute_tool)`, and `run_agent` "
           "saves through `save_checkpoint(state)`.")
_BEFORE = ("before run_agent was ever called. Top-level code runs once when the file is loaded: "
           "keep it to definitions.")


def describe_error(error: dict[str, Any] | None) -> str:
    """``ValueError: bad (line 12 of your code: `x = y`)`` for an exception summary (``where``,
    when the error has it, names the part of the submission instead of "your code")."""
    if not error:
        return "an error"
    text = error.get("type", "Exception")
    if error.get("message"):
        text += f": {error['message']}"
    if error.get("line"):
        where = f"line {error['line']} of {error.get('where') or 'your code'}"
        if error.get("code"):
            where += f": `{error['code']}`"
        text += f" ({where})"
    return text


def _names(names: list[str], quote: str = "`") -> str:
    return " and ".join(f"{quote}{n}{quote}" for n in names)


def missing(names: list[str]) -> str:
    """``names`` (of :data:`REQUIRED`) are bound nowhere at the top level of the code."""
    verb = "is" if len(names) == 1 else "are"
    return f"{_names(names)} {verb} not defined at the top level of your code: {_CALLED}"


def missing_in_cells(names: list[str], wanted: list[str]) -> str:
    """``names`` (of ``wanted``, the names an exercise's answer cells define) are defined in none
    of its answer cells."""
    verb = "is" if len(names) == 1 else "are"
    return (f"{_names(names, '')} {verb} not defined at the top level of your answer cells. Keep "
            f"the names {_names(wanted, '')}, each defined with def at the top of its cell")


def not_defined_in_cell(where: str, name: str) -> str:
    """The answer cell ``where`` (its words: "the answer cell l2_...") does not define ``name``."""
    return f"{where} does not define {name} at its top level; keep the name and define it with def"


def cell_unreadable(where: str, why: str, line: int | None = None, code: str = "",
                    ipython: bool = False) -> str:
    """Python cannot compile the cell ``where``: ``why`` (at ``line``: ``code``); ``ipython``
    when the line is an IPython command, which grading cannot run."""
    at = f" at line {line}" if line is not None else ""
    shown = f": {code}" if code else ""
    hint = (" (IPython commands such as %time or !ls cannot run when your work is graded)"
            if ipython else "")
    return f"Python could not read {where}: {why}{at}{shown}{hint}. Fix the cell so that it runs"


def syntax_error(message: str, line: int | None = None, code: str | None = None,
                 part: str | None = None) -> str:
    """Python cannot parse the code: ``message`` at ``line`` (of ``part``, when it has parts)."""
    where = (f" at line {line}" + (f" of {part}" if part else "")) if line else ""
    shown = f": `{code.strip()}`" if code and code.strip() else ""
    return f"Your code has a syntax error{where}{shown} ({message}), so it cannot run."


def exit_while_loading() -> str:
    """The top level called ``sys.exit()``."""
    return f"Your code called sys.exit() while it was being loaded, {_BEFORE}"


def raised_while_loading(error: dict[str, Any] | None) -> str:
    """The top level raised ``error`` (an exception summary)."""
    return f"Your code raised {describe_error(error)} while it was being loaded, {_BEFORE}"


def hung_while_loading(timeout: float | None = None) -> str:
    """The top level was still running when the run's time (``timeout`` s, if known) was up."""
    when = (f"{timeout:g} s after it started loading" if timeout is not None else
            "when its time was up, before run_agent was ever called")
    return (f"Your code was still running {when}: something at the top level never finishes "
            "(an infinite loop, or a call that waits for input). Keep top-level code to "
            "definitions.")


def died_while_loading(exit_status: int | None = None, *, known: bool = False) -> str:
    """The process ended while the code was being loaded (``known``: its exit status was read)."""
    if known:
        return (f"Your code ended the process while it was being loaded (exit status "
                f"{exit_status}), before run_agent was ever called: remove the top-level call "
                "to os._exit (or whatever ends the process).")
    return ("Your code ended the process while it was being loaded, before run_agent was ever "
            "called: remove the top-level call that ends it (os._exit, sys.exit, a signal).")


def runner_message(reply: dict) -> str:
    """The message for the forking harness's runner's ``{"ok": false, "stage", ...}`` reply."""
    stage = reply.get("stage")
    error = reply.get("error") or {}
    if stage == "syntax":
        return syntax_error(error.get("message"), error.get("line"), error.get("code"))
    if stage == "import":
        return (exit_while_loading() if error.get("type") == "SystemExit"
                else raised_while_loading(error))
    if stage == "missing":
        return missing(reply.get("missing") or ["run_agent", "save_checkpoint"])
    if stage == "not_callable":
        names = " and ".join(f"`{f}` is {'an' if t[0] in 'aeiou' else 'a'} {t}"
                             for f, t in zip(reply["names"], reply["types"], strict=False))
        return f"In your code {names}, not a function: {_CALLED}"
    if stage == "async":
        return (f"{_names(reply.get('functions', []))} is defined with `async def`, but the "
                "course's loop is synchronous: `call_model` and `execute_tool` return their "
                "results directly. Drop `async` and `await`.")
    if stage == "hung":
        return hung_while_loading(reply.get("timeout", 0))
    return died_while_loading(reply.get("exit"), known=True)
