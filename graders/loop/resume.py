"""A small reference resume routine: read ``checkpoint.json`` and run the loop on from it.

Lesson 2 uses it to show, field by field, where resuming falls over when a checkpoint lacks one
of the six fields (Lesson 3 treats resume fully). It runs the rest of the task against a fresh
fake model and fake tools of a `fake_llm` scenario, in memory, and never saves anything.

``resume`` never raises on a bad checkpoint: everything it finds wrong is a `Problem` in the
report, with the field it concerns and what resume ran into, in the lesson's words.

    >>> report = resume("checkpoint.json")          # a path, JSON text, or a dict
    >>> report.ok, report.finished
    (True, True)
    >>> print(report.to_text())
"""

from __future__ import annotations

from typing import Any

from fake_llm import FakeLLMError, load_scenario
from graders.loop.protocol import SIX_FIELDS
from graders.loop.resume_fields import KNOWN_VERSIONS, check_version, starting_state
from graders.loop.resume_reading import read_checkpoint
from graders.loop.resume_report import Problem, ResumeReport
from graders.loop.resume_run import run_on

__all__ = [
    "resume",
    "ResumeReport",
    "Problem",
    "KNOWN_VERSIONS",
    "SIX_FIELDS",
    "DEFAULT_COMPACTION_THRESHOLD",
]

#: Where the context-engineering course's compaction would run, in tokens used so far.
DEFAULT_COMPACTION_THRESHOLD = 100_000


def resume(
    checkpoint: Any,
    *,
    scenario: str = "support-tickets",
    max_turns: int = 10,
    compaction_threshold: int = DEFAULT_COMPACTION_THRESHOLD,
) -> ResumeReport:
    """Resume the loop from ``checkpoint`` against ``scenario``'s fake model and tools.

    ``checkpoint`` is a dict, the JSON text of checkpoint.json, or a path to it (``None``: there
    is no checkpoint.json, as the harness reports a run that never saved). Resume checks
    the fields in the lesson's order, then runs the loop on (without saving): a pending tool
    call is run again (whether it had already run is Lesson 3's reconciliation), the loop stops
    at ``max_turns`` counted turns, and it notes the turn where ``tokensUsed`` first reaches
    ``compaction_threshold`` (where compaction would run). It never raises on a bad checkpoint.
    """
    report = ResumeReport()
    data = read_checkpoint(checkpoint, report)
    if data is None or not check_version(data, report):
        return report
    try:
        sc = load_scenario(scenario)
    except FakeLLMError as err:
        report.problems.append(Problem(None, f"cannot load the scenario to resume against: {err}"))
        return report
    state = starting_state(data, sc.task, report, max_turns=max_turns,
                           compaction_threshold=compaction_threshold)
    if state is None:
        return report
    return run_on(state, sc, report, max_turns=max_turns,
                  compaction_threshold=compaction_threshold)
