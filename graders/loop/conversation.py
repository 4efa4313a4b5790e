"""What resume reads off a conversation: tool results so far, a call left unanswered."""

from __future__ import annotations

import json

__all__ = ["tool_results", "dangling_tool_use", "describe_call"]


def tool_results(messages: list) -> int:
    """How many tool_result blocks ``messages`` hold: the turns that really ran."""
    count = 0
    for message in messages:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list):
            count += sum(isinstance(b, dict) and b.get("type") == "tool_result" for b in content)
    return count


def dangling_tool_use(messages: list) -> dict | None:
    """The tool_use block of a last assistant message that no tool_result answers, if any."""
    if not messages or not isinstance(messages[-1], dict):
        return None
    last = messages[-1]
    if last.get("role") != "assistant" or not isinstance(last.get("content"), list):
        return None
    return next((b for b in last["content"] if isinstance(b, dict) and b.get("type") == "tool_use"),
                None)


def describe_call(call: dict) -> str:
    """``name({input}) (id ...)``, the input cut to 60 characters: a call in one line."""
    arguments = json.dumps(call.get("input"), separators=(",", ":"))
    if len(arguments) > 60:
        arguments = arguments[:57] + "..."
    return f"{call.get('name')}({arguments}) (id {call.get('id')})"
