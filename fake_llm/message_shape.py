"""One message's own shape, as the Messages API requires it: its keys, its role, its blocks.

`check_message_shape` raises `ConversationError` (rules ``message_invalid``, ``content_invalid``);
`content_blocks` reads a message's content as a list of blocks whether it is a string or a list.
"""

from __future__ import annotations

from .errors import ConversationError

__all__ = ["check_message_shape", "content_blocks"]

_BLOCK_FIELDS = {
    "text": {"required": {"text": str}, "optional": {"cache_control", "citations"}},
    "tool_use": {
        "required": {"id": str, "name": str, "input": dict},
        "optional": {"cache_control"},
    },
    "tool_result": {
        "required": {"tool_use_id": str},
        "optional": {"content", "is_error", "cache_control"},
    },
}
_ROLE_BLOCKS = {"user": ("text", "tool_result"), "assistant": ("text", "tool_use")}


def content_blocks(message: dict) -> list[dict]:
    """The message's content as blocks: a string content is one text block."""
    content = message["content"]
    return [{"type": "text", "text": content}] if isinstance(content, str) else content


def check_message_shape(index: int, message: object) -> None:
    """``messages[index]`` is a dict of a role and non-empty content of well-formed blocks."""
    if not isinstance(message, dict):
        raise ConversationError(
            "message_invalid",
            index,
            f"this message is a {type(message).__name__}, not a dict.",
            "a dict {'role': 'user' or 'assistant', 'content': ...}.",
        )
    extra = sorted(set(message) - {"role", "content"})
    missing = sorted({"role", "content"} - set(message))
    if missing or extra:
        problem = (
            f"the message is missing {missing}."
            if missing
            else f"the message has extra keys {extra}."
        )
        raise ConversationError(
            "message_invalid",
            index,
            problem,
            "exactly the keys 'role' and 'content', as the API requires.",
        )
    role = message["role"]
    if role not in _ROLE_BLOCKS:
        raise ConversationError(
            "message_invalid", index, f"role is {role!r}.", "role 'user' or 'assistant'."
        )
    content = message["content"]
    if isinstance(content, str):
        if not content:
            raise ConversationError(
                "content_invalid", index, "content is an empty string.", "non-empty content."
            )
        return
    if not isinstance(content, list) or not content:
        got = "an empty list" if isinstance(content, list) else f"a {type(content).__name__}"
        raise ConversationError(
            "content_invalid",
            index,
            f"content is {got}.",
            "a non-empty string or a non-empty list of content blocks (for an assistant message: "
            "the response's 'content', unchanged).",
        )
    for position, block in enumerate(content):
        _check_block(index, position, role, block)


def _check_block(index: int, position: int, role: str, block: object) -> None:
    where = f"content[{position}]"
    allowed = _ROLE_BLOCKS[role]
    kinds = " or ".join(repr(k) for k in allowed)
    if not isinstance(block, dict) or block.get("type") not in allowed:
        got = block.get("type") if isinstance(block, dict) else type(block).__name__
        raise ConversationError(
            "content_invalid",
            index,
            f"{where} of this {role} message is {got!r}.",
            f"a content block dict whose 'type' is {kinds}.",
        )
    spec = _BLOCK_FIELDS[block["type"]]
    for key, kind in spec["required"].items():
        if not isinstance(block.get(key), kind):
            raise ConversationError(
                "content_invalid",
                index,
                f"{where} (a {block['type']} block) has no {kind.__name__} {key!r}.",
                f"a {block['type']} block with {', '.join(repr(k) for k in spec['required'])}.",
            )
    extra = sorted(set(block) - set(spec["required"]) - spec["optional"] - {"type"})
    if extra:
        raise ConversationError(
            "content_invalid",
            index,
            f"{where} (a {block['type']} block) has extra keys {extra}.",
            f"only the keys the API knows for a {block['type']} block: "
            f"{', '.join(['type', *spec['required'], *sorted(spec['optional'])])}.",
        )
    if block["type"] == "text" and not block["text"]:
        raise ConversationError(
            "content_invalid", index, f"{where} is an empty text block.", "non-empty text."
        )
    if block["type"] == "tool_result":
        result = block.get("content", "")
        texts_only = isinstance(result, list) and all(
            isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
            for b in result
        )
        if not isinstance(result, str) and not texts_only:
            raise ConversationError(
                "content_invalid",
                index,
                f"{where} (a tool_result block) has content of type {type(result).__name__}.",
                "the tool's result as a string (or a list of text blocks).",
            )
        if "is_error" in block and not isinstance(block["is_error"], bool):
            raise ConversationError(
                "content_invalid",
                index,
                f"{where}.is_error is not a bool.",
                "is_error true or false.",
            )

