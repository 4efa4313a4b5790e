"""Run each job's notebook top to bottom in an IPython shell inside Pyodide (see run.mjs).

The browser kernel (``pyodide_kernel``) is IPython's shell on Pyodide, with stand-in modules for
what Pyodide lacks (its ``mocks.py``): the same here. Each notebook runs in its own folder, its
code cells one after another, until one fails. The value of the last line is the JSON report:
per job, each cell's printed text and its error, if any.
"""

import contextlib
import io
import json
import os
import sys
import time
import types

# What pyodide_kernel puts in place before its kernel starts (pyodide_kernel/mocks.py).
for _name in ("fcntl", "resource", "termios", "pexpect"):
    sys.modules[_name] = types.ModuleType(_name)
sys.modules["termios"].TCSAFLUSH = 2

from IPython.core.interactiveshell import InteractiveShell  # noqa: E402


def _run(shell, notebook: dict) -> list[dict]:
    cells = []
    for cell in notebook["cells"]:
        if cell["cell_type"] != "code":
            continue
        source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        printed = io.StringIO()
        started = time.monotonic()
        with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
            result = shell.run_cell(source, store_history=True)
        error = result.error_before_exec or result.error_in_exec
        cells.append({"source": source[:200], "printed": printed.getvalue(),
                      "seconds": round(time.monotonic() - started, 2),
                      "error": None if error is None else f"{type(error).__name__}: {error}"})
        if error is not None:
            break
    return cells


def main() -> str:
    shell = InteractiveShell.instance()
    report = []
    for job in json.loads(JOBS_JSON):  # noqa: F821 - set by run.mjs
        shell.reset(new_session=True)
        os.chdir(os.path.dirname(job["path"]))
        with open(job["path"], encoding="utf-8") as f:
            notebook = json.load(f)
        report.append({"name": job["name"], "cells": _run(shell, notebook)})
    return json.dumps(report)


main()
