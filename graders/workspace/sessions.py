"""Whether a notebook is open in a running JupyterLab: asked before ``checkpoint-lab reset``.

A notebook open in JupyterLab while ``reset`` replaces its file is still the student's old
version in the browser: the next save says "File Changed", and "Overwrite" undoes the reset. So
``reset`` asks every Jupyter server of this user (the ``jpserver-*.json`` files in Jupyter's
runtime folder, whose process is alive) for its sessions, and finds the notebook among them.
A server that does not answer in a second or two counts as not having it open.
"""

from __future__ import annotations

import json
import os
import urllib.request
from dataclasses import dataclass
from pathlib import Path

__all__ = ["OpenSession", "open_sessions"]


@dataclass(frozen=True)
class OpenSession:
    """A running Jupyter server with a session (a kernel) on the notebook."""

    url: str
    path: str  #: the notebook's path as that server names it (relative to its root)


def _alive(pid: object) -> bool:
    if not isinstance(pid, int):
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _servers(runtime_dir: Path | None = None) -> list[dict]:
    from jupyter_core.paths import jupyter_runtime_dir

    folder = Path(runtime_dir or jupyter_runtime_dir())
    found = []
    for path in sorted(folder.glob("jpserver-*.json")):
        try:
            info = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(info, dict) and _alive(info.get("pid")) and info.get("url"):
            found.append(info)
    return found


def _sessions(info: dict, timeout: float) -> list[dict]:
    url = f"{info['url'].rstrip('/')}/api/sessions"
    tokens = [t for t in (info.get("token"), os.environ.get("JUPYTERHUB_API_TOKEN")) if t]
    for token in tokens or [""]:
        request = urllib.request.Request(url, headers={"Authorization": f"token {token}"})
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                sessions = json.loads(response.read())
        except (OSError, ValueError):
            continue
        return sessions if isinstance(sessions, list) else []
    return []


def open_sessions(notebook: Path, *, runtime_dir: Path | None = None,
                  timeout: float = 2.0) -> list[OpenSession]:
    """Every running Jupyter server of this user that has a session on ``notebook``."""
    target = Path(notebook).resolve()
    found = []
    for info in _servers(runtime_dir):
        root = info.get("root_dir") or info.get("notebook_dir")
        if not root:
            continue
        try:
            relpath = target.relative_to(Path(root).expanduser().resolve()).as_posix()
        except ValueError:
            continue
        if any(isinstance(s, dict) and s.get("path") == relpath
               for s in _sessions(info, timeout)):
            found.append(OpenSession(info["url"], relpath))
    return found
