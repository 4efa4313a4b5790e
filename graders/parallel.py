"""Side by side where this Python can start threads, one after another where it cannot.

The harnesses' work happens in child processes or a sandbox; the grader's threads only wait for
them. A browser's Python (Pyodide) starts no thread at all (``RuntimeError: can't start new
thread``): there the same calls run in turn, with the same results in the same order.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from typing import TypeVar

__all__ = ["can_start_threads", "side_by_side"]

T = TypeVar("T")
R = TypeVar("R")


def can_start_threads() -> bool:
    """False in a browser's Python (Pyodide) and under WASI, which have no threads."""
    return sys.platform not in ("emscripten", "wasi")


def side_by_side(function: Callable[[T], R], items: Iterable[T], workers: int | None = None
                 ) -> list[R]:
    """``[function(item) for item in items]``, in threads (one per item, or ``workers``) where
    threads can start."""
    items = list(items)
    if len(items) < 2 or not can_start_threads():
        return [function(item) for item in items]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=workers or len(items)) as pool:
        return list(pool.map(function, items))
