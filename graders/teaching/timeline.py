"""The crash timeline: every moment of a real run, and what a crash there leaves on disk.

`build_timeline` runs the four loops of `graders.teaching.variants` through the crash harness
(``support-tickets`` by default) and keeps, for every moment of the run and every combination
of the two toggles, what the harness found on disk and what `graders.loop.resume.resume` concludes
from it. Nothing is made up: each state is one real crash run.

The moments are those of the "A and B" loop: each model call, each save, each tool running,
and the end. A "B only" loop has no save at point A: dying at that instant leaves on disk (and
in the ledger) exactly what dying during the model call just before leaves, so that is the run
shown there.

    >>> tl = build_timeline()
    >>> s = tl.state("tool_2", save_points="B only", write_mode="in place")
    >>> s.disk.kind
    'no trace'
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from fake_llm import load_scenario
from graders.grading.forked import Harness, HarnessError
from graders.judge.recording import Observation
from graders.loop.resume import ResumeReport, resume
from graders.parallel import side_by_side
from graders.teaching.variants import SAVE_POINTS, WRITE_MODES, variant, variant_name

__all__ = [
    "Moment",
    "DiskState",
    "TimelineState",
    "Timeline",
    "build_timeline",
    "DISK_KINDS",
    "OUTCOMES",
]

#: What the disk view shows: no trace of the run (or of the call in flight), a torn file, or a
#: readable checkpoint.
DISK_KINDS = ("no trace", "torn JSON", "checkpoint")
#: What the strip colours a moment by: the disk kind, but "finished tool reruns" where resume
#: runs a tool again that had returned (A only's blind spot, or a kill before save point B lands).
OUTCOMES = ("no trace", "torn JSON", "finished tool reruns", "checkpoint")


@dataclass(frozen=True)
class Moment:
    """One moment of the run, where the process may die.

    ``id`` is ``model_call_k``, ``save_A_k`` / ``save_B_k`` (the saves of turn k), ``tool_k`` or
    ``end``.
    """

    index: int
    id: str
    kind: str
    k: int | None
    label: str
    phase: str | None = None
    short: str = ""

    @property
    def in_flight_tool(self) -> int | None:
        """The tool call running at this moment (it may have side effects), if any."""
        return self.k if self.kind == "tool" else None


@dataclass(frozen=True)
class DiskState:
    """What was on disk after the crash, as the disk view shows it.

    ``kind`` is one of `DISK_KINDS`. ``checkpoint`` is the parsed checkpoint.json (or None);
    ``text`` its raw text; ``other_files`` every other file left in the directory (a torn or
    unrenamed temp file, say). ``in_flight`` is the tool call named and not yet recorded when
    the process died (``{"k", "id", "name", "input"}``), and ``records_in_flight`` whether the
    checkpoint on disk names it in pendingToolUse.
    """

    kind: str
    headline: str
    checkpoint: dict | None = None
    text: str | None = None
    bytes_on_disk: int | None = None
    bytes_expected: int | None = None
    parse_error: str | None = None
    other_files: dict[str, Any] = field(default_factory=dict)
    in_flight: dict | None = None
    records_in_flight: bool = False
    highlight: tuple[str, ...] = ()
    notes: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class TimelineState:
    """One moment under one combination of the toggles, as the harness ran it."""

    moment: Moment
    save_points: str
    write_mode: str
    point: str
    saves_here: bool
    disk: DiskState
    observation: Observation
    resume: ResumeReport
    conclusion: str
    #: the tools that had returned before the crash and that resume runs again
    reruns: tuple[str, ...] = ()

    @property
    def variant(self) -> str:
        return variant_name(self.save_points, self.write_mode)

    @property
    def outcome(self) -> str:
        """One of `OUTCOMES`: what the strip colours this moment by."""
        if self.disk.kind == "checkpoint" and self.reruns:
            return "finished tool reruns"
        return self.disk.kind

    def to_text(self) -> str:
        """This state in words: the moment, the loop, what is on disk, what resume concludes."""
        from graders.teaching.checkpoint_view import CheckpointView

        lines = [f"Killed at: {self.moment.label}",
                 f"Loop: {self.variant}; harness crash point: {self.point}"]
        if not self.saves_here:
            then = "run the tool" if self.moment.phase == "A" else "call the model"
            lines.append(f"This loop does not save at this moment: it goes straight on to "
                         f"{then}, and nothing on disk changes.")
        if self.outcome != self.disk.kind:
            lines.append(f"(In the strip: {self.outcome}.)")
        lines += ["", f"On disk: {self.disk.headline}"]
        if self.disk.checkpoint is not None:
            view = CheckpointView(self.disk.checkpoint, highlight=self.disk.highlight,
                                  notes=self.disk.notes)
            lines.append(view.to_text())
        elif self.disk.text is not None:
            lines.append(f"  ...{self.disk.text[-80:]!r}")
        lines += ["", f"Resume: {self.conclusion}"]
        return "\n".join(lines)


def _moments(scenario_name: str) -> list[Moment]:
    sc = load_scenario(scenario_name)
    calls = sc.tool_calls
    moments: list[Moment] = []

    def add(id_: str, kind: str, k: int | None, label: str, short: str,
            phase: str | None = None) -> None:
        moments.append(Moment(len(moments), id_, kind, k, label, phase, short))

    for k, call in enumerate(calls, 1):
        add(f"model_call_{k}", "model_call", k, f"model call {k} in flight (the model is about "
            f"to name {call['name']})", f"model call {k}")
        add(f"save_A_{k}", "save", k, f"while save point A of turn {k} was being written "
            f"({call['name']} named, not run)", f"save point A, turn {k}", "A")
        add(f"tool_{k}", "tool", k, f"tool {k} running: {call['name']}",
            f"tool {k} ({call['name']})")
        add(f"save_B_{k}", "save", k, f"while save point B of turn {k} was being written "
            f"({call['name']}'s result recorded)", f"save point B, turn {k}", "B")
    last = len(calls) + 1
    add(f"model_call_{last}", "model_call", last, f"model call {last} in flight (the final "
        "answer)", f"model call {last} (final)")
    add("end", "end", None, "no crash: the run finishes", "no crash")
    return moments


def _point_for(moment: Moment, points: list, write_mode: str) -> tuple[str, bool]:
    """(the harness crash point id to run for ``moment``, whether this loop saves there)."""
    if moment.kind == "model_call":
        return f"killed_during_model_call_{moment.k}", True
    if moment.kind == "tool":
        return f"killed_during_tool_{moment.k}", True
    if moment.kind == "end":
        return "no_crash", True
    for point in points:
        save = point.save or {}
        if (point.kind == "torn_write" and save.get("phase") == moment.phase
                and save.get("tool") == moment.k):
            return point.id, True
    # No save here. Dying at this instant leaves what dying during the nearest model call leaves:
    # at point A (B only) the call before it, tool k not yet run; at point B (A only) the call
    # after it, tool k finished and its result in memory only.
    k = moment.k if moment.phase == "A" else moment.k + 1
    return f"killed_during_model_call_{k}", False


def _tool_names(entries: list) -> str:
    names = [e.get("name") if isinstance(e, dict) else e[0] for e in entries]
    return ", ".join(names[:-1]) + (" and " if len(names) > 1 else "") + names[-1] if names else ""


def _disk(moment: Moment, obs: Observation, sc) -> DiskState:
    in_flight = None
    if moment.in_flight_tool is not None:
        call = sc.tool_calls[moment.in_flight_tool - 1]
        in_flight = {"k": moment.in_flight_tool, **call}
    others = dict(obs.files)
    leftovers = ""
    if others:
        listed = ", ".join(f"{name} ({size} bytes)" for name, size in sorted(others.items()))
        leftovers = f" Beside it: {listed}, a temp file resume ignores."

    if obs.checkpoint is None:
        what = "there is no checkpoint.json"
        if in_flight:
            what += f", so the call in flight ({in_flight['name']}) left no trace either"
        return DiskState("no trace", f"no trace: {what}.{leftovers}", other_files=others,
                         in_flight=in_flight)
    if obs.parse_error is not None:
        expected = (obs.torn or {}).get("bytes_expected")
        of = f" of the {expected:,} the save meant to write" if expected else ""
        return DiskState(
            "torn JSON",
            f"torn JSON: checkpoint.json holds {obs.checkpoint_bytes:,} bytes{of} and "
            f"{obs.parse_error}.{leftovers}",
            text=obs.checkpoint, bytes_on_disk=obs.checkpoint_bytes, bytes_expected=expected,
            parse_error=obs.parse_error, other_files=others, in_flight=in_flight,
        )
    checkpoint = json.loads(obs.checkpoint)
    pending = checkpoint.get("pendingToolUse") if isinstance(checkpoint, dict) else None
    records = bool(in_flight and isinstance(pending, dict) and pending.get("id") == in_flight["id"])
    turns = checkpoint.get("turns")
    notes = {"turns": f"{turns} turn{'s' if turns != 1 else ''} finished"}
    if in_flight and records:
        notes["pendingToolUse"] = f"names the call in flight: {in_flight['name']}"
        headline = (f"checkpoint.json, readable: pendingToolUse records the call in flight, "
                    f"{in_flight['name']}.{leftovers}")
        kind = "checkpoint"
    elif in_flight:
        notes["pendingToolUse"] = f"says nothing about {in_flight['name']}, which is running"
        headline = (f"no trace of the call in flight: checkpoint.json is the save after turn "
                    f"{turns}, and nothing in it names {in_flight['name']}.{leftovers}")
        kind = "no trace"
    elif isinstance(pending, dict):
        # The last save that finished is save point A of the next turn: its call may have run.
        notes["pendingToolUse"] = (f"names {pending.get('name')}: saved at point A, its result "
                                   "not saved since")
        headline = (f"checkpoint.json, readable: save point A of turn {turns + 1}, whose "
                    f"pendingToolUse names {pending.get('name')}.{leftovers}")
        kind = "checkpoint"
    else:
        notes["pendingToolUse"] = "no tool call in flight"
        headline = f"checkpoint.json, readable: the save after turn {turns}.{leftovers}"
        kind = "checkpoint"
    return DiskState(kind, headline, checkpoint=checkpoint, text=obs.checkpoint,
                     bytes_on_disk=obs.checkpoint_bytes, other_files=others,
                     in_flight=in_flight, records_in_flight=records,
                     highlight=("turns", "pendingToolUse"), notes=notes)


def _returned_reruns(moment: Moment, report: ResumeReport, sc) -> tuple[str, ...]:
    """The tools that returned before the crash at ``moment`` and that resume runs again."""
    if moment.kind == "end":
        return ()
    last = moment.k if moment.kind == "save" and moment.phase == "B" else moment.k - 1
    returned = [(c["name"], c["input"]) for c in sc.tool_calls[:last]]
    return tuple(name for name, tool_input in report.ledger if (name, tool_input) in returned)


def _conclusion(moment: Moment, disk: DiskState, obs: Observation, report: ResumeReport,
                saves_here: bool = True, reruns: tuple[str, ...] = ()) -> str:
    ran = [e for e in obs.ledger if isinstance(e, dict)]
    again = [e for e in report.ledger if any(e[0] == r.get("name") and e[1] == r.get("input")
                                                for r in ran)]
    if moment.kind == "end":
        return ("the task finished, so there is nothing to resume: the checkpoint is the last "
                "save, never read.")
    if disk.checkpoint is None:
        lost = "nothing to resume from" if disk.kind == "no trace" else (
            "it cannot parse checkpoint.json, and that was the only copy of the scene")
        rerun = (f"; {_tool_names(ran)}, which already ran, will run again" if ran else "")
        return f"{lost}: the task starts over from zero{rerun}."
    if disk.in_flight and disk.records_in_flight:
        return (f"pendingToolUse says {disk.in_flight['name']} was in flight, so resume knows "
                "exactly which call to reconcile (did it run? the course's next lesson, Resuming "
                "from a checkpoint) before it goes on.")
    if disk.in_flight:
        twice = (f"; {_tool_names(again)} runs a second time" if again else "")
        return (f"it sees turn {disk.checkpoint.get('turns')} finished and nothing pending: it "
                f"does not know {disk.in_flight['name']} was running, asks the model again"
                f"{twice}.")
    if not report.ok:
        return report.problems[0].message
    turns = disk.checkpoint.get("turns")
    pending = disk.checkpoint.get("pendingToolUse")
    if isinstance(pending, dict) and any(
            e.get("name") == pending.get("name") and e.get("input") == pending.get("input")
            and "result" in e for e in ran):
        return (f"pendingToolUse still names {pending.get('name')}, which finished: no save "
                "recorded its result, so resume takes the call as unfinished and runs "
                f"{pending.get('name')} a second time.")
    if isinstance(pending, dict):
        return (f"the last complete save is save point A of turn {turns + 1}: pendingToolUse "
                f"names {pending.get('name')}, so resume knows that call may have run and "
                "reconciles it (the course's next lesson) before it goes on.")
    if moment.kind == "save" and not saves_here:
        return (f"no save happens here, so it picks up after turn {turns} and asks the model "
                "again; the tool has not run yet, so nothing is lost but the model's answer.")
    if moment.kind == "save":
        lost = (f"and with it the result of {_tool_names([(n,) for n in reruns])}, which had "
                "finished: it runs a second time" if reruns else "and nothing else")
        return (f"the previous save is intact: it picks up after turn {turns} and asks the model "
                f"again. The half-done save is lost, {lost}.")
    return (f"it picks up after turn {turns} and asks the model again: nothing is lost but the "
            "model call that was in flight, which has no side effects.")


@dataclass
class Timeline:
    """The moments of a run and, for each moment and toggle combination, its `TimelineState`."""

    scenario: str
    moments: list[Moment]
    states: dict[tuple[str, str, str], TimelineState]

    def moment(self, moment: int | str | Moment) -> Moment:
        """A moment by index, by id (``"tool_2"``), or itself."""
        if isinstance(moment, Moment):
            return moment
        for candidate in self.moments:
            if moment in (candidate.index, candidate.id):
                return candidate
        raise KeyError(f"no moment {moment!r}; the moments are "
                       f"{', '.join(m.id for m in self.moments)}")

    def state(self, moment: int | str | Moment, save_points: str = "A and B",
              write_mode: str = "temp + rename") -> TimelineState:
        """What a crash at ``moment`` leaves, for the loop with these two toggles."""
        key = (self.moment(moment).id, save_points, write_mode)
        if key not in self.states:
            raise KeyError(f"no state for {key}: save points are {SAVE_POINTS}, write modes "
                           f"{WRITE_MODES}")
        return self.states[key]

    def to_text(self) -> str:
        """Every moment under the loops, as a table of what a crash leaves (`OUTCOMES`)."""
        combos = [(sp, wm) for sp in SAVE_POINTS for wm in WRITE_MODES]
        width = max(len(m.short) for m in self.moments) + 4
        head = " | ".join(f"{sp}, {wm}".ljust(30) for sp, wm in combos)
        lines = [f"Crash timeline of {self.scenario}: what is on disk when the process dies",
                 "", f"{'moment'.ljust(width)} | {head}", "-" * (width + 3 + len(head))]
        for m in self.moments:
            cells = [(s.outcome if s.saves_here else f"{s.outcome} (no save)").ljust(30)
                     for s in (self.state(m, sp, wm) for sp, wm in combos)]
            lines.append(f"{f'{m.index + 1}. {m.short}'.ljust(width)} | {' | '.join(cells)}")
        return "\n".join(lines)


def _run_variant(scenario: str, save_points: str, write_mode: str, moments: list[Moment],
                 timeout: float | None) -> dict[tuple[str, str, str], TimelineState]:
    sc = load_scenario(scenario)
    options = {} if timeout is None else {"timeout": timeout}
    states = {}
    with Harness(variant(save_points, write_mode), **options) as harness:
        points = harness.crash_points(scenario)
        ran: dict[str, Observation] = {}
        for moment in moments:
            point, saves_here = _point_for(moment, points, write_mode)
            if point not in ran:
                ran[point] = harness.run_point(scenario, point)
            obs = ran[point]
            if obs.ended != ("finished" if point == "no_crash" else "killed"):
                raise HarnessError(
                    f"the {variant_name(save_points, write_mode)} loop did not run as planned "
                    f"at {point}: it {obs.detail or obs.ended}. The timeline shows only real "
                    "crash runs, so it stops here.")
            disk = _disk(moment, obs, sc)
            report = resume(obs.checkpoint, scenario=scenario)
            reruns = _returned_reruns(moment, report, sc)
            states[(moment.id, save_points, write_mode)] = TimelineState(
                moment, save_points, write_mode, point, saves_here, disk, obs, report,
                _conclusion(moment, disk, obs, report, saves_here, reruns), reruns)
    return states


def build_timeline(scenario: str = "support-tickets", *, timeout: float | None = None
                   ) -> Timeline:
    """Run the four loops through the crash harness at every moment of ``scenario``.

    The four loops run side by side (one harness runner each); on a 2-core machine this takes
    about a second for ``support-tickets``. Where there is no ``fork`` (Windows, a browser) each
    loop runs once, recorded, and its crash states are replayed (the harness says so in one
    line). Raises `graders.grading.forked.HarnessError`, saying why, when a run does not go as
    planned: the timeline never shows a state the harness did not really produce.
    """
    import graders.grading.forked as forked

    moments = _moments(scenario)
    combos = [(sp, wm) for sp in SAVE_POINTS for wm in WRITE_MODES]
    states: dict[tuple[str, str, str], TimelineState] = {}
    # Without fork each loop is recorded in this process, and the recorder stands in for os's
    # file functions process-wide while it runs: the loops then run one after another.
    in_turn = forked.unsupported_reason() is not None
    for found in side_by_side(lambda combo: _run_variant(scenario, *combo, moments, timeout),
                              combos, workers=1 if in_turn else None):
        states.update(found)
    return Timeline(scenario, moments, states)
