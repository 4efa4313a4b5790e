"""What judging one run may cost the grading process, and the run that would cost more.

Every crash state keeps its own copy of ``checkpoint.json``: a run that rewrites a checkpoint of
megabytes in many small writes makes thousands of states of megabytes each. Before the replay,
:func:`check_replay_budget` adds up what those copies would hold (cheaply bounded first, exactly
when the bound is not enough); a run over :data:`REPLAY_BUDGET` is the submission's failure, said
in :class:`OverBudget`'s message, never a grading worker that runs out of memory.
"""

from __future__ import annotations

from graders.judge.disk_model import CHECKPOINT_PATH
from graders.judge.replay_model import DATA_WRITES, ReplayModel
from graders.judge.trace import Op

__all__ = ["REPLAY_BUDGET", "OverBudget", "check_replay_budget", "over_budget_message"]

#: Bytes of checkpoint.json the crash states of one run may hold together.
REPLAY_BUDGET = 256 << 20


class OverBudget(RuntimeError):
    """Judging this run would cost more than one run may; ``str()`` says so to the student."""


def over_budget_message(what: str) -> str:
    """The student's message for a run stopped or refused as over budget (``what`` it did)."""
    return (f"Your code {what}. The grader bounds what one run may cost it (calls, bytes "
            "written, copies of checkpoint.json kept), and a run of the lesson's loop stays far "
            "below that bound; this one went over it, so nothing of it was graded.")


def _written(ops: list[Op]) -> int:
    """An upper bound of any file's size in the run: every byte written, every size set."""
    total = 0
    for op in ops:
        if op.error is not None or op.ret is None:
            continue
        if op.call in DATA_WRITES and op.ret > 0:
            total += op.ret
        elif op.call in ("ftruncate", "truncate") and len(op.args) > 1 \
                and isinstance(op.args[1], int):
            total += max(0, op.args[1])
        elif op.call == "fallocate" and len(op.args) > 3 and all(
                isinstance(a, int) for a in op.args[2:4]):
            total += max(0, op.args[2]) + max(0, op.args[3])
    return total


def check_replay_budget(ops: list[Op], budget: int = REPLAY_BUDGET) -> None:
    """Raise :class:`OverBudget` when the crash states of ``ops`` would hold more than
    ``budget`` bytes of checkpoint.json between them."""
    if (2 * len(ops) + 1) * _written(ops) <= budget:
        return
    model = ReplayModel()
    total = largest = 0
    for op in ops:
        node = model.paths.get(CHECKPOINT_PATH)
        size = len(node.data) if node is not None and node.kind == "file" else 0
        largest = max(largest, size)
        total += size
        if op.call in DATA_WRITES:
            total += size + (op.ret or 0) // 2
        if total > budget:
            raise OverBudget(over_budget_message(
                f"rewrote checkpoint.json (up to {largest:,} bytes) in {len(ops):,} file "
                f"operations: checking every state a crash could leave would hold more than "
                f"{budget >> 20} MB of copies of it"))
        if op.call != "marker":
            model.apply(op)
