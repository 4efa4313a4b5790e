"""Power-cut verdicts: every state a power cut may leave (:mod:`graders.judge.power`)
judged as resume would read it, each failure put down to its cause, in words that describe
what is on disk, never the system call that would have prevented it (that is the hints' job).

The power-cut model: what a machine that loses power may find on disk when it boots again.

A killed process leaves the page cache to the kernel, which writes it out; a power cut does not.
From the same recorded operations as the kill states (:mod:`graders.judge.replay`), this module
builds every state the ALICE model (Pillai et al., OSDI '14; LazyFS does the same for real)
allows at each moment of the run:

- a file's data written since that file's last ``fsync``/``fdatasync`` may be lost (the file as
  of its last sync: empty if it was never synced), zero-filled, partly kept, or all kept; a
  write through an ``O_DSYNC`` or ``O_SYNC`` descriptor is on disk when it returns (as if
  ``fdatasync`` followed it); ``sync_file_range``, with any flags, makes nothing durable (its
  man page: no metadata, no disk cache flush);
- a directory entry created, renamed or removed since that directory's last ``fsync`` may or may
  not have happened, in order: ``checkpoint.json`` may point at what any prefix of the pending
  directory operations left it pointing at;
- ``fsync`` is a barrier: what it covers is on disk before anything after it. ``sync()`` covers
  everything, ``syncfs(fd)`` the file system of ``fd`` (``/work`` or ``/tmp``).

Each state says which of the two went wrong (``"data"``: the bytes did not reach the disk;
``"rename"``: the directory entry did not), so that each check judges its own failures.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from graders.judge.check_state import new_run
from graders.judge.crash_points import Moment, save_label
from graders.judge.disk_model import CHECKPOINT_PATH, UNFOLLOWED, Node
from graders.judge.replay import DATA_WRITES, ReplayModel
from graders.judge.trace import Op

__all__ = ["PowerState", "PowerMoment", "power_moments", "WORK", "judge_power",
           "judge_power_states", "DATA_NOT_SYNCED", "RENAME_NOT_SYNCED", "FILE_SYNCS"]


# -- power model -----------------------------------------------------------------------------------


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


#: The calls after which a file's data is on disk (``sync_file_range`` is not one).
FILE_SYNCS = frozenset({"fsync", "fdatasync"})


class _DurableModel(ReplayModel):
    def __init__(self, ops: list[Op] | None = None) -> None:
        super().__init__(ops)
        self.durable_binding: Node | None = None
        self.pending: list[Node | None] = []
        self.log: list[str] = []
        self._states: tuple | None = None

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
        if op.call in DATA_WRITES:
            desc = self.target_of(op)
            if desc is not None and desc.sync and desc.node.kind == "file":
                desc.node.durable = desc.node.contents()  # O_DSYNC / O_SYNC
                self.log.append(f"file-sync@{op.index}")
        elif op.call in FILE_SYNCS:
            self._file_sync(op, after)
        elif op.call in ("sync", "syncfs"):
            self._sync_all(op, after)

    def _file_sync(self, op: Op, after: Node | None) -> None:
        desc = self.desc(op.pid, op.args[0] if op.args else None)
        if desc is None:
            return
        node = desc.node
        if node.kind == "file":
            node.durable = node.contents()
            self.log.append(f"file-sync@{op.index}")
        elif node.kind == "dir" and node is self.paths.get(WORK):
            self.durable_binding = after
            self.pending = []
            self.log.append(f"dir-sync@{op.index}")

    def _sync_all(self, op: Op, after: Node | None) -> None:
        root = None  # sync(): every file system
        if op.call == "syncfs":
            arg = op.args[0] if op.args else None
            path = (arg.get("path") or b"") if isinstance(arg, dict) else b""
            root = next((r for r in ("/work", "/tmp") if path.decode("utf-8", "replace") == r
                         or path.decode("utf-8", "replace").startswith(r + "/")), "")
        for path, node in self.paths.items():
            if node.kind == "file" and (root is None or path.startswith(root + "/")):
                node.durable = node.contents()
        if root in (None, WORK):
            self.durable_binding = after
            self.pending = []
        self.log.append(f"sync@{op.index}")

    def states(self) -> list[PowerState]:
        """Every distinct ``checkpoint.json`` a power cut now may leave, the running one first."""
        candidates = [self.durable_binding, *self.pending]
        key = (self.lost, tuple(None if n is None else (n.ident, n.version, hash(n.durable),
                                                         n.unknown) for n in candidates))
        if self._states is not None and self._states[0] == key:
            return [PowerState(**vars(s)) for s in self._states[1]]
        found = self._enumerate(candidates)
        self._states = (key, found)
        return [PowerState(**vars(s)) for s in found]

    def _enumerate(self, candidates: list) -> list[PowerState]:
        if self.lost is not None:
            return [PowerState("unknown", None)]
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
    model = _DurableModel(ops)
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


# -- power -----------------------------------------------------------------------------------------


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
        # Only the parenthesis: the rest of the label ("was being written") is save_label's.
        where = (point.label[point.label.find("("):point.label.rfind(")") + 1]
                 if "(" in point.label else "")
        return dataclasses.replace(point, id=new_id, kind="power_cut",
                                   label=save_label(point.index, where))
    else:
        return dataclasses.replace(point, id="power_cut_at_end", kind="power_cut",
                                   label="after the run had finished")
    return dataclasses.replace(point, id=new_id, kind="power_cut")


def _describe_state(state: PowerState, current: bytes | None, *, exact: bool = True) -> str:
    """What checkpoint.json could be after the cut (``exact``: with its byte counts)."""
    if state.kind == "absent":
        return "there could be no checkpoint.json at all"
    if state.data is None:
        return f"checkpoint.json could be {state.kind}"
    size = len(current or b"")
    if state.variant == "lost":
        if not state.data:
            return "checkpoint.json could be empty"
        return ("checkpoint.json could hold only " + (
            f"the {len(state.data):,} bytes" if exact else "the bytes")
            + " that had reached the disk before")
    if state.variant == "zeroed":
        return ("checkpoint.json could hold " + (f"{len(state.data):,} " if exact else "")
                + "zero bytes where its text should be")
    if state.variant == "half":
        return ("checkpoint.json could hold only the first " + (
            f"{len(state.data):,} of its {size:,} bytes" if exact else "part of its bytes"))
    return "checkpoint.json could be an older save"


def judge_power(matrix, scenario, check) -> list:
    """One verdict per power-cut crash point of ``matrix`` (a :class:`Matrix` of one run).

    Every state a power cut may leave at each moment is judged by ``check`` (the kill rules:
    does resume find a complete save that accounts for every tool that had started?). A failure
    is put down to the data (``data_not_synced``: the bytes of the renamed file were not on disk)
    or to the directory (``rename_not_synced``: the rename was not), so that each check judges
    its own. ``evidence["causes"]`` gives each problem's cause in one line, the same at every
    moment it happened (no moment, no byte counts), so that a check can list each cause once.
    """
    new_run(scenario)
    all_moments = [m for pm in matrix.points for m in pm.moments]
    by_moment = {id(pw.moment): pw for pw in power_moments(all_moments, matrix.ops)}
    verdicts = []
    seen_ids: set[str] = set()
    for pm in matrix.points:
        point = _power_point(pm.point)
        if point.id in seen_ids:
            continue
        seen_ids.add(point.id)
        verdict = _judge_point(matrix, scenario, check, pm, point, by_moment)
        if verdict is not None:
            verdicts.append(verdict)
    return verdicts


def judge_power_states(matrix, pm, scenario, check, moment=None
                       ) -> list[tuple[PowerState, bool]]:
    """Each state a power cut at ``moment`` (default: the first) of ``pm`` (a point of
    ``matrix``) may leave, and whether ``check`` passes resume reading it (lesson 04's table of
    saves and its steps)."""
    moment = pm.moments[0] if moment is None else moment
    [pw] = power_moments([moment], matrix.ops)
    point = _power_point(pm.point)
    return [(state, check(_state_observation(matrix, pm, moment, point, state), scenario,
                          point).passed)
            for state in pw.states]


def _judge_point(matrix, scenario, check, pm, point, by_moment):
    """The verdict of one power-cut crash point: its first failure of each cause, or a pass."""
    import dataclasses

    from graders.judge.recording import Verdict

    passed = None
    failed: dict[str, Verdict] = {}
    tried: set = set()
    cut = dataclasses.replace(point, label=f"by a power cut {point.label}")
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
            verdict = check(_state_observation(matrix, pm, moment, point, state), scenario, cut)
            if verdict.passed:
                passed = passed or verdict
            elif state.cause is not None:
                failed[cause] = _explain(verdict, state, current, point, pw, matrix)
            else:
                failed[cause] = verdict
    if not failed:
        return None if passed is None else Verdict(
            passed.scenario, point.id, "power_cut", True, passed.message, passed.evidence)
    ordered = [failed[c] for c in ("general", "data", "rename") if c in failed]
    first = ordered[0]
    evidence = dict(first.evidence)
    evidence["problems"] = [p for v in ordered for p in v.evidence.get("problems", [])]
    evidence["problem"] = evidence["problems"][0] if evidence["problems"] else None
    evidence["messages"] = {v.evidence.get("problem"): v.message for v in ordered}
    evidence["causes"] = {v.evidence.get("problem"): v.evidence.get("cause") or _general(v)
                          for v in ordered}
    evidence["moment"] = point.label
    message = " Also: ".join(v.message for v in ordered)
    return Verdict(first.scenario, point.id, "power_cut", False, message, evidence)


def _general(verdict) -> str:
    """A kill verdict's message without its moment ("Killed by a power cut ...: ")."""
    return f"After a power cut, {verdict.message.split(': ', 1)[-1]}"


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
        obs.parse_error = (moment.unfollowed or UNFOLLOWED if state.kind == "unknown"
                           else f"is a {state.kind}, not a file")
    return obs


def _consequence(message: str) -> str:
    """What resume runs into, from a kill verdict's message ("Resume would ...")."""
    tail = message.split(": ", 1)[-1]
    for marker in ("Resume would", "resume would", "Resume finds", "resume finds"):
        if marker in tail:
            consequence = tail[tail.index(marker):]
            return consequence[0].upper() + consequence[1:]
    return "Resume could not use it."


def _why(state: PowerState, log: list[str]) -> str:
    """Why the state is possible, as what had and had not reached the disk."""
    # What the disk could hold and why, never which call would have prevented it: that is
    # the exercise, and lives in its hints (issue 30, G4).
    if state.cause == "data":
        if not any(entry.startswith(("rename", "link")) for entry in log):
            return "because its bytes had not reached the disk yet"
        return ("because the rename can reach the disk before the bytes of the file it renamed "
                "do")
    return ("because the rename itself may never have reached the disk, although the loop "
            "had gone on to the next tool")


def _explain(verdict, state: PowerState, current, point, pw: PowerMoment, matrix):
    """The message of a state that failed because of what a power cut loses: what is on disk,
    why, and what resume runs into (and, in ``evidence["cause"]``, the same without the moment
    or byte counts: one line per distinct cause)."""
    consequence = _consequence(verdict.message)
    why = _why(state, pw.syncs)
    what = _describe_state(state, current)
    general = _describe_state(state, current, exact=False)
    if state.cause == "data":
        code = DATA_NOT_SYNCED
    else:
        code = RENAME_NOT_SYNCED
        general = ("checkpoint.json could go back to what it was before the rename (an older "
                   "save, or nothing at all)")
        if state.kind == "file":
            what = "the previous checkpoint could come back"
    evidence = dict(verdict.evidence)
    evidence["problems"] = [code]
    evidence["problem"] = code
    evidence["cause"] = f"After a power cut, {general}, {why}. {consequence}"
    evidence["power_state"] = {"cause": state.cause, "variant": state.variant,
                               "bytes": None if state.data is None else len(state.data),
                               "back": state.back}
    verdict.message = f"After a power cut {point.label}, {what}, {why}. {consequence}"
    verdict.evidence = evidence
    return verdict
