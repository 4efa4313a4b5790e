"""Crash, then restart: a kill's leftovers and the next run in the same folder.

A one-shot kill is judged on what it leaves (:mod:`graders.judge.matrix`). A save can be
right then and still break the next run: a fixed temp name opened in append mode, or created
with ``O_EXCL``, is fine until a kill leaves that file behind; then the restarted process's
first save appends a second JSON document and renames the corrupt file over the checkpoint, or
can never save again. :func:`restart_plans` picks the crash states to restart from (one per
distinct set of leftovers, the first whose one-shot verdict passed, one with no empty leftover
if there is: a name only one save used, as a ``mkstemp`` name, counts as any such name), with
the files to put back (what the replay model holds there; a name made from the killed
process's id is marked, for the restart to carry its own, see :func:`_files_at`); the sandbox
runs the grader's resume from each (:mod:`graders.loop.restart`) with the student's save;
:func:`judge_restart` judges that second run: every checkpoint it leaves readable, the whole
task at its end, nothing run twice that resume could know.

A disk that fills during a save: the previous checkpoint must survive.

The sandbox fills the disk once tool :func:`fill_call` has been served
(:meth:`graders.sandbox.session.Session.fill_disk_at`): from then on a write that crosses the
limit writes part of its bytes and returns a short count, and the next one fails, as on a full
disk. A save that writes once and ignores the count renames a truncated file over the checkpoint;
a save that writes in place leaves a torn one. :func:`judge_full_disk` holds every state from
then on (at each call, at the end) to the checkpoint on disk when the disk filled: readable, and
recording no fewer results. ``run_agent`` raising an OSError there is fine.
"""

from __future__ import annotations

import base64
import json
import re
from dataclasses import dataclass, field
from typing import Any

from graders.judge.crash_points import NO_CRASH, CrashPoint, Moment
from graders.judge.disk_model import ROOTS
from graders.judge.matrix import Matrix, build_matrix, load_message
from graders.judge.recording import Recording, Verdict, run_problems
from graders.judge.replay import OverBudget, ReplayModel
from graders.load_errors import describe_error
from graders.loop.protocol import SIX_FIELDS
from graders.loop.resume_report import tool_results
from graders.text import plural

__all__ = ["RestartPlan", "restart_plans", "judge_restart", "RESTART", "disk_after",
           "leftover_words", "unreadable", "FULL_DISK", "fill_call", "judge_full_disk"]


# -- restarts --------------------------------------------------------------------------------------


#: The kind of a restart's verdict (one of Level 2's atomic-save checks' kinds).
RESTART = "restart"


@dataclass
class RestartPlan:
    """Where to restart from: the crash point and moment, what lay beside checkpoint.json, the
    files to put back (``seed``: for the sandbox's bootstrap), and the checkpoint resume reads."""

    origin: CrashPoint
    moment: Moment
    leftovers: dict[str, Any]
    seed: list[dict] = field(default_factory=list)
    checkpoint: Any = None
    number: int = 1

    @property
    def point(self) -> str:
        """The restart's id: ``restart_2_after_torn_write_save_1``."""
        return f"{RESTART}_{self.number}_after_{self.origin.id}"


def _names_used(matrix: Matrix) -> dict[str, int]:
    """How many saves opened, renamed or removed each name."""
    uses: dict[str, int] = {}
    for save in matrix.saves:
        names = set(save.opened) | set(save.removes)
        names |= {n for pair in save.renames for n in pair if isinstance(n, str)}
        for name in names:
            uses[name] = uses.get(name, 0) + 1
    return uses


def restart_plans(matrix: Matrix, scenario, rules) -> list[RestartPlan]:
    """One restart per distinct set of leftovers (their names; names one save alone used count
    as one): the first crash state of that set whose one-shot verdict passed, preferring one
    where no leftover is empty (a file appended to or refused by name fails either way)."""
    uses = _names_used(matrix)
    groups: dict[frozenset, list[tuple]] = {}
    for pm in matrix.points:
        if pm.point.kind == NO_CRASH:
            continue
        for moment in pm.moments:
            key = frozenset(n if uses.get(n, 0) >= 2 else "*" for n in moment.listing)
            if key:
                groups.setdefault(key, []).append((pm, moment))
    plans: list[RestartPlan] = []
    for candidates in groups.values():
        # those with no empty leftover first, each group in its order (a stable sort)
        for pm, moment in sorted(candidates, key=lambda c: 0 in c[1].listing.values()):
            obs = matrix.observation(pm, moment)
            if obs.parse_error is None and rules(obs, scenario, pm.point).passed:
                plans.append(RestartPlan(pm.point, moment, dict(moment.listing),
                                         _files_at(matrix, moment), obs.state, len(plans) + 1))
                break
    return plans


def _killed_pid(matrix: Matrix) -> int | None:
    """The id of the killed run's process as its code saw it: the header of the frame that
    started the run says it (the grading process kept each header as it read it)."""
    for frame in matrix.recording.frames or ():
        header = frame.get("header") or {}
        pid = header.get("pid")
        if frame.get("op") == "loaded" and isinstance(pid, int) and not isinstance(pid, bool):
            return pid if pid > 0 else None
    return None


def _files_at(matrix: Matrix, moment: Moment) -> list[dict]:
    """The files of ``/work`` and ``/tmp`` at ``moment``, as the bootstrap puts them back.

    A name with the killed process's id in it (``checkpoint.json.4711.tmp``) is marked
    ``named_after_pid``: a restarted process may well get that same id (in a container the agent
    is the same low-numbered process each time; the bubblewrap tier's PID namespace gives it),
    so the bootstrap names the file after its own id, whatever id the observer's tier gives it.
    """
    pid = _killed_pid(matrix)
    named = re.compile(rf"(?<![0-9]){pid}(?![0-9])") if pid is not None else None
    model = ReplayModel()
    for op in matrix.ops[:moment.position]:
        if op.call != "marker":
            model.apply(op)
    if moment.how == "during" and moment.write:
        model.apply(matrix.ops[moment.position], keep=moment.write["kept"])
    entries = []
    for path, node in sorted(model.paths.items(), key=lambda item: item[0].count("/")):
        if path in ROOTS or not model.modeled(path):
            continue
        entry: dict[str, Any] = {"path": path, "kind": node.kind}
        if named is not None and named.search(path.rsplit("/", 1)[-1]):
            entry["named_after_pid"] = pid
        if node.kind == "file":
            entry["data"] = base64.b64encode(bytes(node.data)).decode("ascii")
        elif node.kind == "symlink":
            entry["target"] = node.target
        elif node.kind not in ("dir", "fifo"):
            continue
        entries.append(entry)
    return entries


def leftover_words(leftovers: dict[str, Any]) -> str:
    """``checkpoint.abc.tmp (1,216 bytes) and tmp/`` for the files beside checkpoint.json."""
    parts = [f"{name}/" if size == "dir/" else f"{name} ({size:,} bytes)"
             for name, size in sorted(leftovers.items())]
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def disk_after(matrix: Matrix, start: int) -> list[tuple[Moment, str]]:
    """Each call and the end from trace position ``start`` on, with where it is in words."""
    by_seq = {c.seq: c for c in matrix.recording.calls}
    found = []
    for pm in matrix.points:
        for moment in pm.moments:
            if moment.how not in ("call", "end") or moment.position < start:
                continue
            call = by_seq.get((moment.op.frame or {}).get("seq")) if moment.op else None
            where = ("at the end" if call is None else
                     f"when {call.op} call {call.index} came in")
            found.append((moment, where))
    return sorted(found, key=lambda item: item[0].position)


def _bytes(n: int) -> str:
    """``n`` bytes, with thousands separators: "1 byte", "1,594 bytes" (review 4, F12)."""
    return f"{n:,} byte" + ("" if n == 1 else "s")


def unreadable(moment: Moment) -> str | None:
    """Why checkpoint.json at ``moment`` is no checkpoint resume can read (None: it is one)."""
    if moment.kind == "absent":
        return None
    if moment.kind != "file" or moment.data is None:
        return f"was a {moment.kind}, not a file"
    try:
        state = json.loads(moment.data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as err:
        return f"held {_bytes(len(moment.data))} that are not valid JSON ({err})"
    if not isinstance(state, dict) or not set(SIX_FIELDS) <= set(state):
        return f"held {_bytes(len(moment.data))} of JSON without the six fields"
    return None


def judge_restart(plan: RestartPlan, rec: Recording, scenario) -> Verdict:
    """The verdict of the restarted run ``rec`` (from ``plan``)."""
    origin = plan.origin
    point = plan.point
    done = (f"Killed {origin.label}, with {leftover_words(plan.leftovers)} left in "
            "the folder, then restarted there, where resume ran the loop on with "
            "your save_checkpoint")
    evidence: dict[str, Any] = {"origin": origin.id, "leftovers": dict(plan.leftovers)}

    def verdict(problem: str | None, text: str) -> Verdict:
        if problem:
            evidence.update(problem=problem, problems=[problem])
        return Verdict(scenario.name, point, RESTART, problem is None, text, evidence)

    problem = _restart_problem(plan, rec, scenario)
    if problem is None:
        return verdict(None, f"{done}: the next run saved and finished the task as if nothing "
                             "had been left behind.")
    code, text = problem
    return verdict(code, f"{done}; {text}")


def _restart_problem(plan: RestartPlan, rec: Recording, scenario) -> tuple[str, str] | None:
    """(problem, what happened) of the restarted run, or None when it went right."""
    message = load_message(rec)
    if message:
        return "restart_not_loaded", f"then: {message}"
    try:
        matrix = build_matrix(rec, scenario)
    except OverBudget as exc:
        return "over_budget", f"then: {exc}"
    whole = run_problems(rec, matrix.discrepancies, matrix.channel)
    if whole:
        return whole[0]
    for moment, where in disk_after(matrix, 0):
        problem = unreadable(moment)
        if problem:
            return "restart_unreadable", (
                f"{where} checkpoint.json {problem}: with what the kill left behind, a save "
                "of the next run put an incomplete checkpoint in place, and killed then, resume "
                "would find nothing to resume from. Expected every save of the next run to leave "
                "one complete checkpoint, whatever a killed save left.")
    if rec.ended != "finished":
        how = (f"raised {describe_error(rec.error)}" if rec.ended == "raised" and rec.error
               else rec.detail or "did not finish")
        return "restart_failed", (
            f"the restarted run {how}: with what the kill left behind, the next run could not "
            "get through its saves. Expected the next run to save and finish, whatever a killed "
            "save left.")
    return _end_problem(plan, matrix, scenario)


def _end_problem(plan: RestartPlan, matrix: Matrix, scenario) -> tuple[str, str] | None:
    """What the restarted run's end state lacks: the whole task, once."""
    end = matrix.points[-1].moments[-1]
    state = json.loads(end.data.decode("utf-8")) if end.kind == "file" else None
    total = len(scenario.tool_calls)
    if not isinstance(state, dict):
        return "restart_incomplete", ("at the end there was no checkpoint.json. Expected the "
                                      "whole task in it.")
    recorded = tool_results(state.get("messages") or [])
    if recorded != total or state.get("pendingToolUse") is not None \
            or state.get("task") != scenario.task:
        return "restart_incomplete", (
            f"at the end checkpoint.json recorded {plural(recorded, 'tool result')} of "
            f"{total} (pendingToolUse {json.dumps(state.get('pendingToolUse'))[:80]}). Expected "
            "the whole task, every result once and nothing pending.")
    known = tool_results((plan.checkpoint or {}).get("messages") or []) \
        if isinstance(plan.checkpoint, dict) else 0
    ran = sum(1 for c in matrix.recording.calls if c.op == "tool")
    if ran > total - known:
        return "restart_ran_twice", (
            f"it ran {plural(ran, 'tool')}, though checkpoint.json already recorded "
            f"{plural(known, 'result')} of the {total}: a tool whose result was on record ran "
            "again.")
    return None


# -- full disk -------------------------------------------------------------------------------------


#: The kind of a full-disk run's verdict (one of Level 2's atomic-save checks' kinds).
FULL_DISK = "disk_full"


def fill_call(scenario) -> tuple[str, int]:
    """The call after which the disk fills: the tool in the middle of the run."""
    return "tool", max(1, (len(scenario.tool_calls) + 1) // 2)


def _results(moment) -> int | None:
    """How many tool results checkpoint.json at ``moment`` records (None: no checkpoint)."""
    if moment.kind != "file" or unreadable(moment):
        return None
    return tool_results(json.loads(moment.data.decode("utf-8")).get("messages") or [])


def judge_full_disk(rec: Recording, scenario) -> Verdict | None:
    """The verdict of the run ``rec`` whose disk filled at :func:`fill_call` (None when the
    disk could not be filled: the run never reached that call, or this machine refused)."""
    _op, k = fill_call(scenario)
    name = scenario.tool_calls[k - 1]["name"]
    point = f"{FULL_DISK}_after_tool_{k}"
    done = (f"Filled the disk while tool {k} ({name}) ran, so the saves after it could not "
            "write in full (a write that crossed the limit wrote part of its bytes, and the next "
            "one failed, as on a full disk)")
    evidence: dict[str, Any] = {"filled": rec.filled}

    def verdict(problem: str | None, text: str) -> Verdict:
        if problem:
            evidence.update(problem=problem, problems=[problem])
        return Verdict(scenario.name, point, FULL_DISK, problem is None, text, evidence)

    message = load_message(rec)
    if message:
        return verdict("disk_full_not_run", f"Could not run your code to fill its disk: {message}")
    if rec.filled is None or rec.filled.get("error"):
        # never reached (the recorded run's verdicts say why) or not fillable on this machine:
        # no verdict rather than one that fails the check for the grader's own limits
        return None
    try:
        matrix = build_matrix(rec, scenario)
    except OverBudget as exc:
        return verdict("over_budget", str(exc))
    whole = run_problems(rec, matrix.discrepancies, matrix.channel)
    if whole:
        return verdict(*whole[0])
    states = disk_after(matrix, 0)
    seqs = [(m.op.frame or {}).get("seq") if m.op else None for m, _ in states]
    if rec.filled["seq"] not in seqs:
        return verdict("disk_full_not_placed", f"{done}, but the grader could not place that "
                       "call among your file operations.")
    states = states[seqs.index(rec.filled["seq"]):]
    before = _results(states[0][0])
    for moment, where in states[1:]:
        problem = _after_the_fill(moment, before)
        if problem:
            what, resume = problem
            return verdict("disk_full_lost", (
                f"{done}: {where} checkpoint.json {what}, so resume would {resume}. Expected the "
                "checkpoint on disk when the disk filled (or a later complete save) to survive a "
                "save that cannot finish; run_agent raising an OSError there is fine."))
    if rec.ended == "hung":
        return verdict("hung", f"{done}: your code was {rec.detail}.")
    how = (f"raised {describe_error(rec.error)}" if rec.ended == "raised" and rec.error else
           "returned" if rec.ended == "finished" else rec.detail or "ended")
    return verdict(None, f"{done}: checkpoint.json stayed a complete save to the end, and your "
                         f"run_agent {how}.")


def _after_the_fill(moment, before: int | None) -> tuple[str, str] | None:
    """(what is wrong with checkpoint.json at ``moment``, what resume would do), or None."""
    problem = unreadable(moment)
    if problem:
        return problem, "find nothing to resume from"
    if moment.kind == "absent":
        return None if before is None else (
            "was gone, though there was one when the disk filled", "start the task over")
    results = _results(moment)
    if before is not None and results is not None and results < before:
        return (f"recorded {results} tool results, fewer than the {before} on disk when the "
                "disk filled", "run again tools that had already run")
    return None
