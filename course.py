#!/usr/bin/env python3
"""Checkpoint Lab's front door: needs only Python 3.11+ and the standard library.

    python3 course.py lab     open the course in JupyterLab
    python3 course.py test    run the whole test suite (extra arguments go to pytest)

Each command creates the project's own virtual environment in ``.venv`` the first time, and
updates it whenever ``pyproject.toml`` has changed since it was last installed.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
STAMP = VENV / ".checkpoint-lab-installed"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PYTHON = BIN / ("python.exe" if os.name == "nt" else "python")

USAGE = """usage: python3 course.py {lab,test} [args...]

  lab    open the course in JupyterLab (your own copies of the notebooks, in ./workspace)
  test   run the whole test suite; any further arguments are passed to pytest
"""


def _wanted_stamp() -> str:
    return hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()


def ensure_venv() -> None:
    """Create or update .venv so that it matches pyproject.toml."""
    if sys.version_info < (3, 11):  # noqa: UP036 - this file runs before any check of ours
        sys.exit(f"Checkpoint Lab needs Python 3.11 or newer; this is {sys.version.split()[0]}.")
    if not PYTHON.exists():
        print(f"Creating the course's virtual environment in {VENV} ...", flush=True)
        venv.EnvBuilder(with_pip=True, clear=True).create(VENV)
    wanted = _wanted_stamp()
    if STAMP.exists() and STAMP.read_text().strip() == wanted:
        return
    print("Installing the course's packages into .venv (about a minute the first time) ...",
          flush=True)
    pip = [str(PYTHON), "-m", "pip", "install", "--disable-pip-version-check", "-q"]
    try:
        subprocess.run([*pip, "-e", f"{ROOT}[test]"], check=True, cwd=ROOT)
    except subprocess.CalledProcessError as err:
        sys.exit(f"pip could not install the course's packages (exit {err.returncode}); "
                 "see its messages above, fix the cause, then run the same command again.")
    STAMP.write_text(wanted + "\n")


def main(argv: list[str]) -> int:
    if not argv or argv[0] in {"-h", "--help", "help"}:
        print(USAGE)
        return 0 if argv else 2
    command, rest = argv[0], argv[1:]
    if command not in {"lab", "test"}:
        print(f"course.py: unknown command {command!r}.\n\n{USAGE}", file=sys.stderr)
        return 2
    ensure_venv()
    if command == "lab":
        cmd = [str(BIN / "checkpoint-lab"), "lab", *rest]
    else:
        cmd = [str(PYTHON), "-m", "pytest", *rest]
    env = dict(os.environ, VIRTUAL_ENV=str(VENV), PATH=f"{BIN}{os.pathsep}{os.environ['PATH']}")
    child = subprocess.Popen(cmd, cwd=ROOT, env=env)
    while True:
        try:
            return child.wait()
        except KeyboardInterrupt:
            # Ctrl-C reaches the child too (same terminal): let it shut down in its own way.
            continue


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
