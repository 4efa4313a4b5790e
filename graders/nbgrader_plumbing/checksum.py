"""nbgrader's checksum of a cell, without importing nbgrader.

``import nbgrader`` takes seconds (its package imports its server extensions and exchange), and
``checkpoint-lab check`` only needs to tell a written answer left as released from one the
student wrote. This is ``nbgrader.utils.compute_checksum`` for a plain notebook dict;
``tests/test_cli_check.py`` holds it equal to nbgrader's own on every graded cell we release.
"""

from __future__ import annotations

import hashlib

__all__ = ["cell_checksum"]


def cell_checksum(cell: dict) -> str:
    """The checksum nbgrader stores in ``metadata.nbgrader.checksum`` for ``cell``."""
    meta = (cell.get("metadata") or {}).get("nbgrader")
    grade = bool(meta) and meta.get("grade", False)
    solution = bool(meta) and meta.get("solution", False)
    locked = bool(meta) and not solution and (grade or meta.get("locked", False))
    source = cell.get("source", "")
    source = "".join(source) if isinstance(source, list) else source
    digest = hashlib.md5()
    for part in (source, cell.get("cell_type", ""), str(grade), str(solution), str(locked),
                 meta["grade_id"]):
        digest.update(part.encode("utf-8"))
    if grade:
        digest.update(str(float(meta["points"])).encode("utf-8"))
    return digest.hexdigest()
