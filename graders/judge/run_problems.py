"""What is wrong with a run as a whole, whatever any crash state holds: file operations the
grader could not follow, and a channel the submission wrote to itself.

Both are the submission's doing; the judge fails the run's end with them (every check), and an
observation carries them (``Observation.run_problems``) for a check that reads observations.
"""

from __future__ import annotations

from graders.judge.recording import Recording

__all__ = ["UNOBSERVED", "CHANNEL", "run_problems"]

#: Problem codes of the traced grader, beside the judge's own
#: (graders.judge.checkpoint_rules.PROBLEMS).
UNOBSERVED = "unobserved_write"
CHANNEL = "grader_channel"


def run_problems(rec: Recording, discrepancies: list[str],
                 channel: list[str]) -> list[tuple[str, str]]:
    """``(problem code, message)`` for each thing wrong with the run ``rec`` as a whole."""
    problems = []
    if discrepancies:
        problems.append((UNOBSERVED, (
            "Your code changed checkpoint.json in a way the grader could not follow: "
            f"{discrepancies[0]}. The grader checks every state a crash could leave by "
            "replaying your file operations, so it needs them to be ordinary file operations "
            "(open, write, rename, ...), made while the loop runs.")))
    if rec.protocol:
        problems.append((CHANNEL, (
            f"Your code wrote {rec.protocol[0]} to the grader's own channel (the socket behind "
            "call_model and execute_tool). Only call the two functions; the channel is not "
            "yours to write.")))
    elif channel:
        problems.append((CHANNEL, (
            f"On the grader's own channel (the socket behind call_model and execute_tool), "
            f"{channel[0]}: the grader places each call among your file operations by the "
            "record of its sending, so it cannot judge a crash around that call. Only call the "
            "two functions; the channel is not yours to write.")))
    return problems
