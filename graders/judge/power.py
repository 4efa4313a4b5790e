"""Power-cut crash states: what a machine that loses power may find on disk when it boots again.

A killed process leaves the page cache to the kernel, which writes it out; a power cut does not.
From the same recorded operations as the kill states (:mod:`graders.judge.replay`), this module
builds every state the ALICE model (Pillai et al., OSDI '14; LazyFS does the same for real)
allows at each moment of the run:

- a file's data written since that file's last ``fsync``/``fdatasync`` may be lost (the file as
  of its last sync: empty if it was never synced), zero-filled, partly kept, or all kept;
- a directory entry created, renamed or removed since that directory's last ``fsync`` may or may
  not have happened, in order: ``checkpoint.json`` may point at what any prefix of the pending
  directory operations left it pointing at;
- ``fsync`` is a barrier: what it covers is on disk before anything after it. ``sync()`` and
  ``syncfs()`` cover everything.

Each state says which of the two went wrong (``"data"``: the bytes did not reach the disk;
``"rename"``: the directory entry did not), so that each check judges its own failures.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from graders.judge.disk_model import CHECKPOINT_PATH, Node
from graders.judge.moments import Moment
from graders.judge.replay_model import ReplayModel
from graders.judge.trace import Op

__all__ = ["PowerState", "PowerMoment", "power_moments", "WORK"]

WORK = "/work"


@dataclass
class PowerState:
    """One state a power cut may leave: ``checkpoint.json`` and why it is what it is.

    ``cause`` is None (as the running system saw it), ``"data"`` (its bytes are not all on
    disk: ``variant`` says how: ``"lost"``, ``"zeroed"``, ``"half"``) or ``"rename"`` (the
    directory entry is an older one: ``back`` directory operations did not reach the disk).
    """

    kind: str
    data: bytes | None
    cause: str | None = None
    variant: str = ""
    back: int = 0


@dataclass
class PowerMoment:
    """A moment of the run (as in :class:`~graders.judge.replay.Moment`) and its power states."""

    moment: Moment
    states: list[PowerState] = field(default_factory=list)
    syncs: list[str] = field(default_factory=list)


class _DurableModel(ReplayModel):
    def __init__(self) -> None:
        super().__init__()
        self.durable_binding: Node | None = None
        self.pending: list[Node | None] = []
        self.log: list[str] = []

    def binding(self) -> Node | None:
        return self.paths.get(CHECKPOINT_PATH)

    def apply(self, op: Op, *, keep: int | None = None) -> None:
        before = self.binding()
        super().apply(op, keep=keep)
        if op.error is not None or op.ret is None:
            return
        after = self.binding()
        if after is not before:
            self.pending.append(after)
            self.log.append(f"{op.call}@{op.index}")
        if op.call in ("fsync", "fdatasync", "sync_file_range"):
            desc = self.desc(op.pid, op.args[0] if op.args else None)
            if desc is None:
                return
            node = desc.node
            if node.kind == "file":
                node.durable = bytes(node.data)
                self.log.append(f"file-sync@{op.index}")
            elif node.kind == "dir" and node is self.paths.get(WORK):
                self.durable_binding = after
                self.pending = []
                self.log.append(f"dir-sync@{op.index}")
        elif op.call in ("sync", "syncfs"):
            for node in self.paths.values():
                if node.kind == "file":
                    node.durable = bytes(node.data)
            self.durable_binding = after
            self.pending = []
            self.log.append(f"sync@{op.index}")

    def states(self) -> list[PowerState]:
        """Every distinct ``checkpoint.json`` a power cut now may leave, the running one first."""
        candidates = [self.durable_binding, *self.pending]
        found: list[PowerState] = []
        seen: set = set()
        for back, node in enumerate(reversed(candidates)):
            for state in _variants(node):
                if back and state.cause is None:
                    state.cause, state.back = "rename", back
                key = (state.kind, state.data)
                if key not in seen:
                    seen.add(key)
                    found.append(state)
        return found


def _variants(node: Node | None) -> list[PowerState]:
    if node is None:
        return [PowerState("absent", None)]
    if node.kind != "file":
        return [PowerState(node.kind, None)]
    if node.unknown:
        return [PowerState("unknown", None)]
    data = bytes(node.data)
    states = [PowerState("file", data)]
    if node.durable != data:
        states.append(PowerState("file", node.durable, "data", "lost"))
        states.append(PowerState("file", b"\0" * len(data), "data", "zeroed"))
        common = 0
        while (common < min(len(data), len(node.durable))
               and data[common] == node.durable[common]):
            common += 1
        half = common + (len(data) - common) // 2
        states.append(PowerState("file", data[:half], "data", "half"))
    return states


def power_moments(moments: list[Moment], ops: list[Op]) -> list[PowerMoment]:
    """The power states at each of ``moments`` (from :func:`graders.judge.replay.replay`)."""
    model = _DurableModel()
    wanted = {m.position: [] for m in moments}
    for m in moments:
        wanted[m.position].append(m)
    out: list[PowerMoment] = []
    position = 0
    for op in ops:
        while position <= op.index:
            for m in wanted.get(position, []):
                if m.how in ("before", "call", "end"):
                    out.append(PowerMoment(m, model.states(), list(model.log)))
            position += 1
        if op.call != "marker":
            model.apply(op)
    for m in wanted.get(len(ops), []):
        if m.how == "end":
            out.append(PowerMoment(m, model.states(), list(model.log)))
    return out


# -- verdicts ------------------------------------------------------------------------------------

#: Problem codes of the power-cut checks (``Verdict.evidence["problems"]``).
DATA_NOT_SYNCED = "data_not_synced"
RENAME_NOT_SYNCED = "rename_not_synced"


def _power_point(point):
    """The power-cut crash point standing for a kill crash point (same moment, other id)."""
    import dataclasses

    if point.kind == "killed_during_tool":
        new_id = f"power_cut_during_tool_{point.index}"
    elif point.kind == "killed_during_model_call":
        new_id = f"power_cut_during_model_call_{point.index}"
    elif point.kind in ("torn_write", "killed_before_rename"):
        new_id = f"power_cut_in_save_{point.index}"
        where = point.label[point.label.find("("):] if "(" in point.label else ""
        return dataclasses.replace(point, id=new_id, kind="power_cut",
                                   label=f"in the middle of save {point.index} {where}".strip())
    else:
        return dataclasses.replace(point, id="power_cut_at_end", kind="power_cut",
                                   label="after the run had finished")
    return dataclasses.replace(point, id=new_id, kind="power_cut")


def _describe_state(state: PowerState, current: bytes | None) -> str:
    if state.kind == "absent":
        return "there could be no checkpoint.json at all"
    if state.data is None:
        return f"checkpoint.json could be {state.kind}"
    size = len(current or b"")
    if state.variant == "lost":
        if not state.data:
            return "checkpoint.json could be empty"
        return f"checkpoint.json could hold only its last synced {len(state.data):,} bytes"
    if state.variant == "zeroed":
        return f"checkpoint.json could hold {len(state.data):,} zero bytes"
    if state.variant == "half":
        return (f"checkpoint.json could hold only the first {len(state.data):,} of its "
                f"{size:,} bytes")
    return "checkpoint.json could be an older save"


def judge_power(matrix, scenario, check) -> list:
    """One verdict per power-cut crash point of ``matrix`` (a :class:`Matrix` of one run).

    Every state a power cut may leave at each moment is judged by ``check`` (the kill checker:
    does resume find a complete save that accounts for every tool that had started?). A failure
    is put down to the data (``data_not_synced``: the bytes of the renamed file were not on disk)
    or to the directory (``rename_not_synced``: the rename was not), so that each check judges
    its own.
    """
    import dataclasses

    from graders.judge.verdict import Verdict

    all_moments = [m for pm in matrix.points for m in pm.moments]
    by_moment = {id(pw.moment): pw for pw in power_moments(all_moments, matrix.ops)}
    verdicts = []
    seen_ids: dict[str, int] = {}
    for pm in matrix.points:
        point = _power_point(pm.point)
        if point.id in seen_ids:
            continue
        seen_ids[point.id] = 1
        passed = None
        failed: dict[str, Verdict] = {}
        tried: set = set()
        for moment in pm.moments:
            pw = by_moment.get(id(moment))
            if pw is None:
                continue
            current = pw.states[0].data if pw.states else None
            for state in pw.states:
                cause = state.cause or "general"
                if cause in failed or (cause, state.kind, state.data) in tried:
                    continue
                tried.add((cause, state.kind, state.data))
                cut = dataclasses.replace(point, label=f"by a power cut {point.label}")
                verdict = check(_state_observation(matrix, pm, moment, point, state), scenario,
                                cut)
                if verdict.passed:
                    passed = passed or verdict
                    continue
                if state.cause is not None:
                    verdict = _explain(verdict, state, current, point, pw, matrix)
                failed[cause] = verdict
        if not failed and passed is None:
            continue
        if not failed:
            verdicts.append(Verdict(passed.scenario, point.id, "power_cut", True, passed.message,
                                    passed.evidence))
            continue
        ordered = [failed[c] for c in ("general", "data", "rename") if c in failed]
        first = ordered[0]
        evidence = dict(first.evidence)
        evidence["problems"] = [p for v in ordered for p in v.evidence.get("problems", [])]
        evidence["problem"] = evidence["problems"][0] if evidence["problems"] else None
        evidence["messages"] = {v.evidence.get("problem"): v.message for v in ordered}
        message = " Also: ".join(v.message for v in ordered)
        verdicts.append(Verdict(first.scenario, point.id, "power_cut", False, message, evidence))
    return verdicts


def _state_observation(matrix, pm, moment, point, state: PowerState):
    import json

    obs = matrix.observation(pm, moment)
    obs.kind, obs.point, obs.ended = "power_cut", point.id, "killed"
    obs.detail = f"power cut {point.label}"
    obs.torn = None
    obs.parse_error = None
    if state.kind == "file":
        obs.checkpoint = state.data.decode("utf-8", "surrogateescape")
        obs.checkpoint_bytes = len(state.data)
        try:
            json.loads(state.data.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as err:
            obs.parse_error = f"is not valid JSON ({err})"
    elif state.kind == "absent":
        obs.checkpoint, obs.checkpoint_bytes = None, None
    else:
        obs.checkpoint, obs.checkpoint_bytes = "", 0
        obs.parse_error = f"is a {state.kind}, not a file"
    return obs


def _explain(verdict, state: PowerState, current, point, pw: PowerMoment, matrix):
    """The message of a state that failed because of what a power cut loses."""
    tail = verdict.message.split(": ", 1)[-1]
    consequence = ""
    for marker in ("Resume would", "resume would", "Resume finds", "resume finds"):
        if marker in tail:
            consequence = tail[tail.index(marker):]
            consequence = consequence[0].upper() + consequence[1:]
            break
    what = _describe_state(state, current)
    log = pw.syncs
    renamed = any(entry.startswith(("rename", "link")) for entry in log)
    if state.cause == "data":
        code = DATA_NOT_SYNCED
        if renamed:
            why = ("because the rename can reach the disk before the bytes of the file it "
                   "renamed, and that file was not fsynced first")
            if _synced_after_rename(log):
                why += " (it is fsynced only after the rename: too late)"
        else:
            why = "because its bytes had not been fsynced"
    else:
        code = RENAME_NOT_SYNCED
        why = ("because the rename itself may never have reached the disk: the folder that "
               "holds checkpoint.json was not fsynced after it")
        if _dir_synced_before_rename(log):
            why += " (it is fsynced before the rename, which that fsync cannot cover)"
        if state.kind == "file":
            what = "the previous checkpoint could come back"
    message = (f"After a power cut {point.label}, {what}, {why}. "
               + (consequence or "Resume could not use it."))
    evidence = dict(verdict.evidence)
    evidence["problems"] = [code]
    evidence["problem"] = code
    evidence["power_state"] = {"cause": state.cause, "variant": state.variant,
                               "bytes": None if state.data is None else len(state.data),
                               "back": state.back}
    verdict.message = message
    verdict.evidence = evidence
    return verdict


def _synced_after_rename(log: list[str]) -> bool:
    last_rename = max((i for i, e in enumerate(log) if e.startswith("rename")), default=-1)
    return any(e.startswith("file-sync") for e in log[last_rename + 1:]) if last_rename >= 0 \
        else False


def _dir_synced_before_rename(log: list[str]) -> bool:
    renames = [i for i, e in enumerate(log) if e.startswith(("rename", "renameat"))]
    syncs = [i for i, e in enumerate(log) if e.startswith("dir-sync")]
    return bool(renames and syncs and syncs[-1] < renames[-1])
