"""``checkpoint-lab lab`` and ``checkpoint-lab reset``: the course in JupyterLab, in your workspace.

``lab`` copies the course's notebooks into the student's workspace (see
``graders.workspace.notebooks``), writes the workspace's own Jupyter configuration into
``<workspace>/.checkpoint-lab/`` and then becomes JupyterLab, serving the workspace. Outside the
workspace it writes only the course's own settings into this environment, where they are missing
(`graders.cli.doctor`): the user's own Jupyter settings are left alone, the news pop-up and update
checks are off, nbgrader's assignment list works against a local exchange inside the workspace, and
the kernel is this Python's, so ``graders`` and ``fake_llm`` import in every notebook. jupytext's
pairing is off there (it is for the repository's lessons, not a student's copies), and a saved
notebook keeps a one-line "run this cell" in place of each widget
(``graders.workspace.notebooks.before_save``).

``reset NOTEBOOK`` puts one notebook back to its released state and keeps the student's version
in ``<workspace>/backups/``. While the notebook is open in a running JupyterLab (a session on it,
`graders.workspace.sessions`) it does nothing and says to close it first: the old version in the
browser would be saved back over the reset.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

from graders.cli import UsageError
from graders.workspace.notebooks import (
    ASSIGNMENT,
    Workspace,
    WorkspaceError,
    course_root,
    default_workspace,
    released_notebooks,
)

__all__ = ["COURSE_ID", "add_arguments", "jupyter_command", "prepare_jupyter", "run"]

#: The nbgrader course id of the local exchange.
COURSE_ID = "checkpoint-lab"

_DATA = Path(__file__).resolve().parents[1] / "data" / "jupyter"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options of ``lab`` or ``reset`` (whichever ``parser`` is for)."""
    command = parser.prog.split()[-1]
    if command == "reset":
        parser.add_argument(
            "notebook", metavar="NOTEBOOK",
            help="the notebook to put back, e.g. 02_two_latent_failures (a path to it works too)",
        )
    else:
        parser.add_argument("--no-browser", action="store_true",
                            help="start JupyterLab without opening a browser")
        parser.add_argument("--port", type=int, default=None,
                            help="the port to serve on (default: the first free one from 8888)")
    parser.add_argument(
        "--workspace", metavar="DIR", default=None,
        help="your working folder (default: workspace/ in the course's folder)",
    )


def _workspace(args: argparse.Namespace) -> Workspace:
    try:
        path = Path(args.workspace) if args.workspace else default_workspace()
        return Workspace(path)
    except WorkspaceError as err:
        raise UsageError(str(err)) from None


def _write_json(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def _seed_settings(dest: Path) -> None:
    """Put the course's JupyterLab settings into ``dest``, keeping any the student changed."""
    source = _DATA / "user-settings"
    for shipped in sorted(source.rglob("*.jupyterlab-settings")):
        target = dest / shipped.relative_to(source)
        wanted = json.loads(shipped.read_text(encoding="utf-8"))
        if target.exists():
            try:
                current = json.loads(target.read_text(encoding="utf-8"))
            except ValueError:  # the student edited it by hand (JSON5 with comments): theirs
                continue
            if not isinstance(current, dict) or all(k in current for k in wanted):
                continue
            wanted = {**wanted, **current}
        _write_json(target, wanted)


def _release_to_exchange(ws: Workspace, exchange: Path) -> None:
    """Make ``lesson2`` a released assignment of the local exchange, as nbgrader lays it out."""
    course = exchange / COURSE_ID
    outbound = course / "outbound" / ASSIGNMENT
    for folder in (exchange, course / "inbound", course / "feedback_public"):
        folder.mkdir(parents=True, exist_ok=True)
    for item in released_notebooks(ws.course):
        if item.relpath.startswith("exercises/"):
            outbound.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(item.source, outbound / item.source.name)


def prepare_jupyter(ws: Workspace) -> dict[str, str]:
    """Write the workspace's Jupyter configuration; return the environment JupyterLab needs."""
    state = ws.state_dir
    config_dir = state / "jupyter-config"
    exchange = state / "exchange"
    config_dir.mkdir(parents=True, exist_ok=True)
    # nbgrader warns at every request unless it finds an nbgrader_config.py.
    (config_dir / "nbgrader_config.py").write_text(
        "# Written by `checkpoint-lab lab` at every start: the student side of a local exchange.\n"
        "c = get_config()  # noqa: F821\n"
        f"c.CourseDirectory.course_id = {COURSE_ID!r}\n"
        f"c.Exchange.root = {str(exchange)!r}\n"
        f"c.Exchange.cache = {str(state / 'exchange-cache')!r}\n"
        f"c.Exchange.assignment_dir = {str(ws.path / 'exercises')!r}\n"
        "# Validate says what a failed check said (graders.nbgrader_plumbing.validation), "
        "not 'Partial credit'.\n"
        "import graders.nbgrader_plumbing.validation  # noqa: E402\n"
        "graders.nbgrader_plumbing.validation.install()\n",
        encoding="utf-8",
    )
    # This Python's kernel, ahead of any "python3" kernel the user has registered elsewhere.
    _write_json(state / "jupyter-data" / "kernels" / "python3" / "kernel.json", {
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3 (ipykernel)",
        "language": "python",
        "metadata": {"debugger": True},
    })
    _seed_settings(state / "lab" / "user-settings")
    _release_to_exchange(ws, exchange)

    def path_list(*first: Path, var: str) -> str:
        rest = [p for p in os.environ.get(var, "").split(os.pathsep) if p]
        return os.pathsep.join([*(str(p) for p in first), *rest])

    return {
        "JUPYTER_CONFIG_PATH": path_list(config_dir, _DATA / "config", var="JUPYTER_CONFIG_PATH"),
        "JUPYTER_PATH": path_list(state / "jupyter-data", var="JUPYTER_PATH"),
        "JUPYTERLAB_SETTINGS_DIR": str(state / "lab" / "user-settings"),
        "JUPYTERLAB_WORKSPACES_DIR": str(state / "lab" / "workspaces"),
        "CHECKPOINT_LAB_WORKSPACE": str(ws.path),
    }


def _port_is_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def jupyter_command(ws: Workspace, *, port: int | None, open_browser: bool,
                    start_page: str | None = None) -> list[str]:
    """The command line that runs JupyterLab on ``ws``."""
    cmd = [sys.executable, "-m", "jupyterlab", f"--ServerApp.root_dir={ws.path}"]
    if port is not None:
        cmd += [f"--ServerApp.port={port}", "--ServerApp.port_retries=0"]
    if not open_browser:
        cmd.append("--no-browser")
    if start_page:
        cmd.append(f"--LabApp.default_url=/lab/tree/{start_page}")
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")
    return cmd


def _repair_environment() -> None:
    """The course's Jupyter settings into this environment too (`graders.cli.doctor`), so that a
    plain ``jupyter lab`` here later behaves as this one does. A read-only environment (a shared
    one on a hub) is left as it is: the workspace's own settings cover this JupyterLab."""
    from graders.cli.doctor import repair

    try:
        repair(Path(sys.prefix))
    except OSError:
        pass


def _lab(args: argparse.Namespace) -> int:
    if args.port is not None and not 1 <= args.port <= 65535:
        raise UsageError(f"--port {args.port} is not a port; give a number from 1 to 65535")
    if args.port is not None and not _port_is_free(args.port):
        raise UsageError(f"port {args.port} is already in use; pick another with --port, "
                         "or leave --port out to take the first free one")
    ws = _workspace(args)
    if not released_notebooks(ws.course):
        raise UsageError(f"the course in {ws.course} ships no notebooks yet "
                         "(lessons/*.ipynb, exercises/*.ipynb); nothing to open")
    try:
        report = ws.sync()
    except WorkspaceError as err:
        raise UsageError(str(err)) from None
    _repair_environment()
    env = prepare_jupyter(ws)
    # On the first run, open the first lesson: that is where a newcomer starts.
    lessons = [p for p in report.added if p.startswith("lessons/")]
    print(f"Your workspace: {ws.path}")
    for line in report.lines():
        print(f"  {line}")
    print("Starting JupyterLab (press Ctrl-C twice to stop it) ...", flush=True)
    cmd = jupyter_command(ws, port=args.port, open_browser=not args.no_browser,
                          start_page=lessons[0] if lessons else None)
    env = {**os.environ, **env}
    if os.name == "posix":
        os.chdir(ws.path)
        os.execve(cmd[0], cmd, env)  # JupyterLab takes over this process (and its pid)
    return subprocess.call(cmd, cwd=ws.path, env=env)


def _refuse_while_open(ws: Workspace, name: str) -> None:
    """UsageError when JupyterLab has the notebook ``name`` open (a session on it)."""
    from graders.workspace.sessions import open_sessions

    try:
        item = ws.find(name)
    except WorkspaceError as err:
        raise UsageError(str(err)) from None
    found = open_sessions(ws.path / item.relpath)
    if found:
        where = ", ".join(sorted({s.url for s in found}))
        raise UsageError(
            f"{item.relpath} is open in JupyterLab ({where}); nothing was reset. Close it first "
            "(File > Close and Shut Down Notebook), then run this again: otherwise JupyterLab's "
            "next save writes your old version back over the reset")


def _reset(args: argparse.Namespace) -> int:
    ws = _workspace(args)
    _refuse_while_open(ws, args.notebook)
    try:
        result = ws.reset(args.notebook)
    except WorkspaceError as err:
        raise UsageError(str(err)) from None
    print(f"{result.path} is back to its released state.")
    if result.backup:
        print(f"Your version is kept in {result.backup}")
    else:
        print("(There was no changed copy to keep.)")
    return 0


def run(args: argparse.Namespace) -> int:
    """Run ``checkpoint-lab lab`` or ``checkpoint-lab reset``."""
    if args.command == "reset":
        return _reset(args)
    try:
        course_root()
    except WorkspaceError as err:
        raise UsageError(str(err)) from None
    return _lab(args)
