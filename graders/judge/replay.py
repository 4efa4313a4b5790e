"""Replay recorded file operations on a model of the sandbox's files: every state a kill can leave.

The sandbox's writable places (``/work`` and ``/tmp``) start empty. Applying the recorded
operations one by one, the model knows at every point what ``/work/checkpoint.json`` is: a
file with these bytes, nothing, a FIFO, a link. A process killed just before operation ``i``
leaves the state after operations ``0..i-1``; one killed in the middle of a write leaves part
of that write's bytes on top of it: cut after the first byte, at each 512-byte sector and 4 KiB
page boundary, in the middle and before the last byte when the write goes into checkpoint.json
itself (each distinct state once), in the middle when it goes into a file renamed over it
later. That is the record-and-replay approach of ALICE (Pillai et al., OSDI '14): one run, every
crash state, no second run to compare with.

The parts: :mod:`graders.judge.disk_model` (the files and names), :mod:`~graders.judge.
processes` (descriptors and working directories), :mod:`~graders.judge.path_walk` (paths as the
kernel resolves them), :mod:`~graders.judge.file_operations` and
:mod:`~graders.judge.replay_model` (what each operation does),
:mod:`~graders.judge.moments` (one state a kill leaves), :mod:`~graders.judge.binding` (which
operations matter to ``checkpoint.json``). This module walks the run and keeps the old import
paths.
"""

from __future__ import annotations

from graders.judge.binding import BINDING, bound_to_checkpoint, touches, touches_checkpoint
from graders.judge.crash_points import PADDING
from graders.judge.disk_model import CHECKPOINT_PATH, ROOTS, Node
from graders.judge.moments import Moment
from graders.judge.replay_model import DATA_WRITES, ReplayModel, cut_points
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
    it), part way through each such write (see the module docstring), at each grader call
    marker, and at the end.
    """
    bound = bound_to_checkpoint(ops)
    model = ReplayModel(ops)
    moments: list[Moment] = []
    previous = 0  # the JSON of the checkpoint the last call found (padding left out)
    for op in ops:
        if op.call == "marker":
            moments.append(model.moment(op.index, "call", op))
            if moments[-1].data is not None:
                previous = len(moments[-1].data.rstrip(PADDING))
            continue
        if touches_checkpoint(model, op) or touches(model, op, bound):
            before = model.moment(op.index, "before", op)
            moments.append(before)
            if op.call in DATA_WRITES and (op.ret or 0) > 1 and op.error is None:
                moments += _torn(model, op, before, previous)
        model.apply(op)
    moments.append(model.moment(len(ops), "end", None))
    return moments, model.unfollowed


def _torn(model: ReplayModel, op: Op, before: Moment, previous: int) -> list[Moment]:
    """The distinct states write ``op`` leaves cut part way (just the middle for a write into
    another file: checkpoint.json is then as it was). ``previous``: where the JSON of the
    checkpoint the last call found ended, a cut of its own (see
    :func:`graders.judge.crash_points.tear_limit`)."""
    total = op.ret or 0
    if not model.into_checkpoint(op):
        return [model.torn(op, total // 2, before)]
    start = model.write_start(op)
    size = max(len(model.paths[CHECKPOINT_PATH].data), start + total)
    cuts = cut_points(start, total, size)
    if 0 < previous - start < total:
        cuts = sorted({*cuts, previous - start})
    seen = {(before.kind, before.data)}
    found = []
    for keep in cuts:
        moment = model.torn(op, keep, before)
        if (moment.kind, moment.data) in seen:
            continue  # the same state as one already taken: judged once
        seen.add((moment.kind, moment.data))
        found.append(moment)
    return found
