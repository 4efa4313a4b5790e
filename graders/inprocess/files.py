"""The names of the files a forked child leaves: what the harness reads after the child ends.

The child writes its record into its harness directory (``EVENTS``, ``LEDGER``, ``STDOUT``,
``STDERR``); ``CHECKPOINT`` is what the submission saves in its working directory.
"""

from graders.loop.protocol import CHECKPOINT

__all__ = ["CHECKPOINT", "EVENTS", "LEDGER", "STDOUT", "STDERR"]

EVENTS = "events.jsonl"
LEDGER = "ledger.jsonl"
STDOUT = "stdout.txt"
STDERR = "stderr.txt"
