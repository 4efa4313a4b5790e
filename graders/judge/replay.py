"""Replay recorded file operations on a model of the sandbox's files: every state a kill can leave.

The sandbox's writable places (``/work`` and ``/tmp``) start empty. Applying the recorded
operations one by one, the model knows at every point what ``/work/checkpoint.json`` is: a
file with these bytes, nothing, a FIFO, a link. A process killed just before operation ``i``
leaves the state after operations ``0..i-1``; one killed in the middle of a write leaves part
of that write's bytes (here: half of them) on top of it. That is the record-and-replay approach of
ALICE (Pillai et al., OSDI '14): one run, every crash state, no second run to compare with.

The parts: :mod:`graders.judge.disk_model` (the files and names), :mod:`~graders.judge.
file_operations` and :mod:`~graders.judge.replay_model` (what each operation does),
:mod:`~graders.judge.moments` (one state a kill leaves), :mod:`~graders.judge.binding` (which
operations matter to ``checkpoint.json``). This module walks the run and keeps the old import
paths.
"""

from __future__ import annotations

from graders.judge.binding import BINDING, bound_to_checkpoint, touches, touches_checkpoint
from graders.judge.disk_model import CHECKPOINT_PATH, ROOTS, Node
from graders.judge.moments import Moment
from graders.judge.replay_model import DATA_WRITES, ReplayModel
from graders.judge.trace import Op

__all__ = ["Moment", "replay", "CHECKPOINT_PATH", "ROOTS"]

# the names this module had before it was split, for code that still imports them from here
_Model = ReplayModel
_Node = Node
_BINDING = BINDING


def replay(ops: list[Op]) -> tuple[list[Moment], list[Op]]:
    """Every moment worth checking, in order, and the writes the model could not follow.

    A moment is taken before each operation that may change ``/work/checkpoint.json`` (what it
    holds or what the name points to) or a file that becomes it later (a temp file renamed over
    it), halfway through each such write, at each grader call marker, and at the end.
    """
    bound = bound_to_checkpoint(ops)
    model = ReplayModel()
    moments: list[Moment] = []
    for op in ops:
        if op.call == "marker":
            moments.append(model.moment(op.index, "call", op))
            continue
        if touches_checkpoint(model, op) or touches(model, op, bound):
            moments.append(model.moment(op.index, "before", op))
            if op.call in DATA_WRITES and (op.ret or 0) > 1 and op.error is None:
                moments.append(model.torn(op, (op.ret or 0) // 2, moments[-1]))
        model.apply(op)
    moments.append(model.moment(len(ops), "end", None))
    return moments, model.unfollowed
