"""The notebooks a site serves: the released lessons and exercises, laid out as in a workspace.

A student's browser storage then holds the same ``lessons/`` and ``exercises/lesson2/`` a
``checkpoint-lab lab`` workspace holds, so a notebook downloaded from the site has the name and
place the instructor's ``checkpoint-lab grade`` expects. Each copy names the browser's kernel
(``python``, Pyodide's) in its ``kernelspec``, where the release names ipykernel's ``python3``:
JupyterLite would otherwise ask which kernel to start every time a notebook opens; its links
to the course's other notebooks point where a workspace keeps them (`graders.workspace.links`).
"""

from __future__ import annotations

import json
from pathlib import Path

from graders.workspace.links import relink
from graders.workspace.notebooks import released_notebooks

__all__ = ["BROWSER_KERNELSPEC", "write_contents"]

#: The kernelspec of the Pyodide kernel (``jupyterlite-pyodide-kernel``'s name for it).
BROWSER_KERNELSPEC = {"display_name": "Python (Pyodide)", "language": "python", "name": "python"}


def browser_notebook(data: bytes, relpath: str = "") -> bytes:
    """A released notebook's bytes with the browser kernel's kernelspec, and (given its path in
    the repository, ``relpath``) its links to the course's notebooks as in a workspace."""
    notebook = json.loads(data)
    notebook.setdefault("metadata", {})["kernelspec"] = dict(BROWSER_KERNELSPEC)
    if relpath:
        relink(notebook, relpath)
    return (json.dumps(notebook, indent=1, ensure_ascii=False) + "\n").encode("utf-8")


def write_contents(root: Path, dest: Path) -> list[str]:
    """Copy every released notebook of the course in ``root`` under ``dest``; returns their
    paths relative to ``dest``."""
    written = []
    for released in released_notebooks(root):
        target = dest / released.relpath
        target.parent.mkdir(parents=True, exist_ok=True)
        source = released.source
        target.write_bytes(browser_notebook(source.read_bytes(),
                                            f"{source.parent.name}/{source.name}"))
        written.append(released.relpath)
    return written
