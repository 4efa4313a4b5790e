"""Power-cut verdicts: every state a power cut may leave (:mod:`graders.judge.power_model`)
judged as resume would read it, each failure put down to its cause, in words that describe
what is on disk, never the system call that would have prevented it (that is the hints' job).
"""

from __future__ import annotations

from graders.judge.disk_model import UNFOLLOWED
from graders.judge.moments import save_label
from graders.judge.power_model import WORK, PowerMoment, PowerState, power_moments

__all__ = ["PowerState", "PowerMoment", "power_moments", "WORK", "judge_power",
           "judge_power_states", "DATA_NOT_SYNCED", "RENAME_NOT_SYNCED"]


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

    from graders.judge.verdict import Verdict

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
