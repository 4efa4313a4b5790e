"""One reading of a conversation, shared by the fake model and the judge: what the Messages API
treats as the same request reads the same here.

The API accepts one conversation written several ways, and so do the fake model's script and the
judge (``graders/judge``), through this module alone:

- a message's ``content`` given as a string is one text block; consecutive text blocks read as
  one (their texts joined);
- a ``tool_result``'s ``content`` is its text, whether it is a string, a list of text blocks, or
  absent (the empty text); ``"is_error": false`` is the same as no ``is_error``;
- ``cache_control`` on a block changes nothing the model reads;
- the ``tool_result`` blocks of one user message answer their calls by ``tool_use_id``, in no
  order: they read as one set (sorted by id here), before any text.

Nothing here decides whether a request is valid: `fake_llm.rules` does, and refuses what the API
refuses whatever this module says. A value of an unknown shape is kept as it is, so it compares
equal to nothing but itself.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["normalize_content", "normalize_message", "normalize_conversation",
           "canonical_message", "same_message", "result_text"]

_IGNORED_KEYS = frozenset({"cache_control"})


def result_text(content: Any) -> Any:
    """A ``tool_result``'s content as the model reads it: its text (a string, text blocks
    joined, or ``""`` when absent); any other shape is kept as it is."""
    if content is None or isinstance(content, str):
        return content or ""
    if isinstance(content, list) and all(
        isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
        for b in content
    ):
        return "".join(b["text"] for b in content)
    return content


def _block(block: Any) -> Any:
    if not isinstance(block, dict):
        return block
    out = {k: v for k, v in block.items() if k not in _IGNORED_KEYS}
    if out.get("type") == "tool_result":
        out["content"] = result_text(out.get("content"))
        if out.get("is_error") is False:
            del out["is_error"]
    return out


def normalize_content(content: Any) -> Any:
    """A message's content as a list of blocks in the one reading (see the module docstring)."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if not isinstance(content, list):
        return content
    results, rest = [], []
    for block in map(_block, content):
        is_result = isinstance(block, dict) and block.get("type") == "tool_result"
        if is_result and not rest:
            results.append(block)
            continue
        plain_text = (isinstance(block, dict) and set(block) == {"type", "text"}
                      and block["type"] == "text" and isinstance(block["text"], str))
        if plain_text and rest and isinstance(rest[-1], dict) and set(rest[-1]) == {
                "type", "text"} and rest[-1].get("type") == "text":
            rest[-1] = {"type": "text", "text": rest[-1]["text"] + block["text"]}
        else:
            rest.append(block)
    results.sort(key=lambda b: str(b.get("tool_use_id")))
    return results + rest


def normalize_message(message: Any) -> Any:
    """``{"role", "content"}`` with its content in the one reading; other values unchanged."""
    if not isinstance(message, dict) or set(message) != {"role", "content"}:
        return message
    return {"role": message["role"], "content": normalize_content(message["content"])}


def normalize_conversation(messages: Any) -> Any:
    """Every message of ``messages`` in the one reading (a value that is not a list: as is)."""
    if not isinstance(messages, list):
        return messages
    return [normalize_message(m) for m in messages]


def canonical_message(message: Any) -> str:
    """One text for every way of writing ``message`` that the API reads alike."""
    try:
        return json.dumps(normalize_message(message), sort_keys=True, separators=(",", ":"),
                          ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(message)


def same_message(a: Any, b: Any) -> bool:
    """Whether the API reads ``a`` and ``b`` as the same message."""
    return canonical_message(a) == canonical_message(b)
