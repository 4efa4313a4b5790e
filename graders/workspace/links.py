"""The links between the course's notebooks, in each place a notebook is read.

The notebooks are written for the repository's layout (``lessons/NN_name.ipynb``,
``exercises/NN_name.ipynb``), which is what a plain ``jupyter lab`` at the repository root
shows. A workspace (and the JupyterLite site, laid out as one) keeps the exercises in the
nbgrader assignment's folder, ``exercises/lesson2/``: each copy's links to another of the
course's notebooks are rewritten for that place, so that every link resolves in both layouts.
Links to anything else (a URL, an anchor, a file that is not one of the course's notebooks) are
left as written.
"""

from __future__ import annotations

import posixpath
import re

__all__ = ["LINK", "WORKSPACE_EXERCISES", "relative_links", "relink", "workspace_place"]

#: A markdown link's target (``[text](target)``, ``[text](<target with spaces>)``) or an HTML
#: ``href``/``src``: group 1, 2 or 3.
LINK = re.compile(r"\]\((?:<([^>]+)>|([^)\s]+))|(?:href|src)=\"([^\"]+)\"")
_ELSEWHERE = re.compile(r"^([a-z][a-z0-9+.-]*:|#|/)", re.I)
_COURSE_NOTEBOOK = re.compile(r"^(lessons|exercises)/[^/]+\.ipynb$")


#: Where a workspace keeps the exercises (the nbgrader assignment's folder in ``exercises/``).
WORKSPACE_EXERCISES = "exercises/lesson2"


def workspace_place(relpath: str, exercises: str = WORKSPACE_EXERCISES) -> str:
    """Where the course file at ``relpath`` (relative to the repository) lives in a layout that
    keeps the exercises in ``exercises``: ``exercises/NN.ipynb`` -> ``exercises/lesson2/NN.ipynb``
    (a workspace) or ``lesson2/NN.ipynb`` (a hub's home); a lesson stays where it is."""
    if relpath.startswith("exercises/") and relpath.count("/") == 1:
        return f"{exercises}/{relpath.removeprefix('exercises/')}"
    return relpath


def relative_links(text: str) -> list[str]:
    """The links of markdown ``text`` that point into the course (no URL, no anchor alone)."""
    found = []
    for match in LINK.finditer(text):
        link = match.group(1) or match.group(2) or match.group(3)
        if not _ELSEWHERE.match(link):
            found.append(link)
    return found


def _moved(link: str, relpath: str, place: str, exercises: str) -> str:
    target, hash_, anchor = link.partition("#")
    at_root = posixpath.normpath(posixpath.join(posixpath.dirname(relpath), target))
    if not target or not _COURSE_NOTEBOOK.match(at_root):
        return link
    moved = posixpath.relpath(workspace_place(at_root, exercises),
                              posixpath.dirname(place) or ".")
    return moved + hash_ + anchor


def relink(notebook: dict, relpath: str, exercises: str = WORKSPACE_EXERCISES) -> dict:
    """``notebook`` (the course's file at ``relpath``) with each link to another of the course's
    notebooks pointing where that notebook is in a layout that keeps the exercises in
    ``exercises`` (a workspace by default); changed in place and returned."""
    place = workspace_place(relpath, exercises)

    def swap(match: re.Match) -> str:
        whole = match.group(0)
        link = match.group(1) or match.group(2) or match.group(3)
        if _ELSEWHERE.match(link):
            return whole
        return whole.replace(link, _moved(link, relpath, place, exercises), 1)

    for cell in notebook.get("cells", []):
        if not isinstance(cell, dict) or cell.get("cell_type") != "markdown":
            continue
        source = cell.get("source", "")
        text = "".join(source) if isinstance(source, list) else str(source)
        new = LINK.sub(swap, text)
        if new != text:
            cell["source"] = new.splitlines(keepends=True) if isinstance(source, list) else new
    return notebook
