"""What a student reads when the runner could not load their code, by the stage it failed at."""

from __future__ import annotations

from graders.judge.observation import describe_error
from graders.submission import _missing_message

__all__ = ["load_message"]


def load_message(reply: dict) -> str:
    """The message for the runner's ``{"ok": false, "stage", ...}`` reply to a load."""
    stage = reply.get("stage")
    if stage == "syntax":
        err = reply.get("error") or {}
        where = f" at line {err['line']}" if err.get("line") else ""
        code = f": `{err['code']}`" if err.get("code") else ""
        return (f"Your code has a syntax error{where}{code} ({err.get('message')}), so it "
                "cannot run.")
    if stage == "import":
        err = reply.get("error") or {}
        if err.get("type") == "SystemExit":
            return ("Your code called sys.exit() while it was being loaded, before run_agent was "
                    "ever called. Top-level code runs once when the file is loaded: keep it to "
                    "definitions.")
        return (f"Your code raised {describe_error(err)} while it was being loaded, before "
                "run_agent was ever called. Top-level code runs once when the file is loaded: "
                "keep it to definitions.")
    if stage == "missing":
        return _missing_message(reply.get("missing") or ["run_agent", "save_checkpoint"])
    if stage == "not_callable":
        names = " and ".join(f"`{f}` is {'an' if t[0] in 'aeiou' else 'a'} {t}"
                             for f, t in zip(reply["names"], reply["types"], strict=False))
        return (f"In your code {names}, not a function: the grader calls "
                "`run_agent(task, tools, call_model, execute_tool)`, and `run_agent` saves "
                "through `save_checkpoint(state)`.")
    if stage == "async":
        names = " and ".join(f"`{f}`" for f in reply.get("functions", []))
        return (f"{names} is defined with `async def`, but the course's loop is synchronous: "
                "`call_model` and `execute_tool` return their results directly. Drop `async` "
                "and `await`.")
    if stage == "hung":
        return (f"Your code was still running {reply.get('timeout', 0):g} s after it started "
                "loading: something at the top level never finishes (an infinite loop, or a "
                "call that waits for input). Keep top-level code to definitions.")
    return (f"Your code ended the process while it was being loaded (exit status "
            f"{reply.get('exit')}), before run_agent was ever called: remove the top-level call "
            "to os._exit (or whatever ends the process).")
