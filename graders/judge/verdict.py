"""The verdict: what the judge concludes for one scenario and crash point."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["Verdict", "LOAD_POINT"]

#: The ``point`` of the single verdict given when a submission cannot even be loaded.
LOAD_POINT = "load"


@dataclass
class Verdict:
    """One verdict, as plain data.

    Attributes:
        scenario: the scenario name, e.g. ``"support-tickets"``.
        point: the crash point id, e.g. ``"killed_during_tool_2"`` (``"load"`` when the
            submission could not be loaded at all).
        kind: the crash point's kind, e.g. ``"killed_during_tool"``.
        passed: whether the checkpoint on disk was what resume needs at that point.
        message: what was done, what was on disk, what was expected, and what resume would run
            into, in the lesson's words.
        evidence: the facts behind the message (bytes on disk, expected bytes, the ledger, ...).
        skipped: the point could not be run here (for instance, on a platform without fork).
    """

    scenario: str
    point: str
    kind: str
    passed: bool
    message: str
    evidence: dict[str, Any] = field(default_factory=dict)
    skipped: bool = False

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able dict (``json.dumps`` works on it)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Verdict:
        """The verdict ``to_dict`` described."""
        return cls(
            scenario=data["scenario"],
            point=data["point"],
            kind=data["kind"],
            passed=bool(data["passed"]),
            message=data["message"],
            evidence=dict(data.get("evidence") or {}),
            skipped=bool(data.get("skipped", False)),
        )

    def __str__(self) -> str:
        mark = "skipped" if self.skipped else ("passed" if self.passed else "FAILED")
        return f"{self.scenario} / {self.point}: {mark}. {self.message}"
