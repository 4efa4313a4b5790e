"""The judge: turn a recorded run into crash states and verdicts. Pure: it runs no student code
and imports nothing from :mod:`graders.sandbox`.
"""

from graders.judge.recording import Call, Recording, Snapshot

__all__ = ["Recording", "Call", "Snapshot"]
