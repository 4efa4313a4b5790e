"""How many hints a student opened, kept in their notebook: read from the hint outputs and the
notebook's metadata, plain notebook JSON in and out.

Each hint's output (`graders.checks.hints`) carries ``{"checkpoint_lab": {"hints": {...}}}`` in
its metadata with the running counts; :func:`record_hints` (the notebook server's save hook,
`graders.workspace.notebooks.before_save`) keeps the highest count per check in the notebook's
own metadata, and :func:`hints_opened` reads them back for the instructor. It needs nothing of
the checks, so saving a notebook loads none of the grading.
"""

from __future__ import annotations

from typing import Any

__all__ = ["METADATA_KEY", "record_hints", "hints_opened"]

#: The key under which hint counts are kept in output and notebook metadata.
METADATA_KEY = "checkpoint_lab"


def _merged(found: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The highest count per check among ``found`` (hint counts), or None when there are none."""
    if not found:
        return None
    opened: dict[str, int] = {}
    for counts in found:
        for check_id, n in (counts.get("opened") or {}).items():
            if isinstance(n, int):
                opened[check_id] = max(opened.get(check_id, 0), n)
    return {"notebook": found[-1].get("notebook"), "opened": opened,
            "total": sum(opened.values())}


def _latest_counts(nb: dict) -> dict[str, Any] | None:
    """The counts of every hint output in ``nb``, merged (cells may run in any order)."""
    found = []
    for cell in nb.get("cells", []):
        for output in cell.get("outputs", []) or []:
            counts = (output.get("metadata") or {}).get(METADATA_KEY, {}).get("hints")
            if isinstance(counts, dict):
                found.append(counts)
    return _merged(found)


def record_hints(nb: dict) -> dict:
    """Keep the highest hint counts of ``nb``'s outputs and metadata in its metadata; return it.

    Meant for the notebook server's save hook, so the counts stay in the notebook even where
    the outputs are cleared later, and never go down. A notebook with no hint output is left as
    it is.
    """
    counts = _latest_counts(nb)
    if counts is not None:
        saved = nb.get("metadata", {}).get(METADATA_KEY, {}).get("hints")
        if isinstance(saved, dict):
            counts = _merged([saved, counts])
        nb.setdefault("metadata", {}).setdefault(METADATA_KEY, {})["hints"] = counts
    return nb


def hints_opened(nb: dict) -> dict[str, int]:
    """How many hints a student opened in ``nb`` (a notebook as a dict), by check id."""
    saved = nb.get("metadata", {}).get(METADATA_KEY, {}).get("hints")
    counts = _merged([c for c in (saved, _latest_counts(nb)) if isinstance(c, dict)]) or {}
    return dict(counts.get("opened", {}))
