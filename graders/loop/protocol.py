"""The checkpoint protocol's own names, in one place for the judge, resume and the checks."""

__all__ = ["SIX_FIELDS", "CHECKPOINT"]

#: The file the loop saves its state to, in its working directory.
CHECKPOINT = "checkpoint.json"

#: The six fields of checkpoint.json, in the order the lesson teaches them.
SIX_FIELDS = ("version", "task", "turns", "tokensUsed", "messages", "pendingToolUse")
