"""The Messages API's structural rules for a conversation, checked one message at a time.

`validate_conversation` applies them alone; the fake model applies them together with its
script (see `fake_llm.model`), through the ``on_message`` hook of `walk_conversation`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from .errors import ConversationError

__all__ = ["RULES", "validate_conversation", "walk_conversation", "declared_tool_names"]

RULES: dict[str, str] = {
    "messages_invalid": "messages must be a non-empty list of messages",
    "message_invalid": "each message is a dict with exactly the keys 'role' and 'content'",
    "content_invalid": "content is a non-empty string or a non-empty list of content blocks",
    "tools_invalid": "tools is a list of tool definitions, each with a 'name'",
    "first_not_user": "the first message is the user's task",
    "roles_not_alternating": "user and assistant messages alternate",
    "tool_result_missing": (
        "every tool_use is answered by a tool_result in the very next user message"
    ),
    "tool_result_not_first": "in a user message, tool_result blocks come before any text",
    "tool_result_unknown_id": (
        "a tool_result answers a tool_use of the assistant message just before it"
    ),
    "tool_result_duplicate": "each tool_use is answered exactly once",
    "tool_results_split": (
        "when one assistant message asks for several tools, every tool_result comes in the one "
        "user message that follows, not spread over several messages"
    ),
    "tool_results_out_of_order": (
        "the tool_results of one turn come in the order of its tool_use blocks (script rule)"
    ),
    "tool_use_id_duplicate": "tool_use ids are unique in the conversation",
    "tool_undeclared": "every tool used is declared in the request's tools",
    "last_not_user": "the last message sent to the model is a user message",
    "task_mismatch": "the first message holds the scenario's task (script rule)",
    "script_mismatch": "the conversation so far is the one the script produced (script rule)",
    "tool_result_changed": (
        "tool results are recorded exactly as the tool returned them (script rule)"
    ),
    "script_ended": "after the final answer (stop_reason 'end_turn') the loop stops (script rule)",
}

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

OnMessage = Callable[[int, dict], None]


def declared_tool_names(tools: object) -> set[str]:
    """The names declared by a request's ``tools`` list; `ConversationError` if it is malformed."""
    expected = (
        "tools=scenario.tools: a list of tool definitions like "
        "{'name', 'description', 'input_schema'}."
    )
    if not isinstance(tools, list | tuple):
        raise ConversationError(
            "tools_invalid", None, f"tools is a {type(tools).__name__}, not a list.", expected
        )
    names = set()
    for position, tool in enumerate(tools):
        if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
            raise ConversationError(
                "tools_invalid",
                None,
                f"tools[{position}] is not a tool definition with a 'name'.",
                expected,
            )
        names.add(tool["name"])
    return names


def validate_conversation(
    messages: object, tools: Iterable[dict] | None = None, *, allow_pending: bool = False
) -> None:
    """Check ``messages`` against the Messages API's structural rules; raise `ConversationError`.

    The rules are those of `RULES` not marked "script rule": a non-empty list of
    ``{"role", "content"}`` dicts, starting with the user's task, roles alternating, every
    ``tool_use`` answered by a ``tool_result`` with its id in the very next user message and no
    ``tool_result`` for an id that was not asked for, ids unique, and the conversation ending with
    a user message. When ``tools`` is given, every ``tool_use`` must name a tool it declares.

    With ``allow_pending=True`` the conversation may also end with an assistant message whose
    ``tool_use`` is not answered yet: a checkpoint written at save point A looks like that.
    """
    walk_conversation(messages, tools, allow_pending=allow_pending)


def walk_conversation(
    messages: object,
    tools: Iterable[dict] | None = None,
    *,
    allow_pending: bool = False,
    on_message: OnMessage | None = None,
) -> None:
    """Apply the structural rules message by message, calling ``on_message(index, message)``
    after each message's own checks except the one for duplicate tool_use ids, so that a
    script can explain a duplicated turn in its own words first."""
    if not isinstance(messages, list) or not messages:
        got = "an empty list" if isinstance(messages, list) else f"a {type(messages).__name__}"
        raise ConversationError(
            "messages_invalid",
            None,
            f"messages is {got}.",
            "a non-empty list whose first message is {'role': 'user', 'content': task}.",
        )
    declared = None if tools is None else declared_tool_names(tools)
    seen_ids: dict[str, int] = {}
    answered: dict[str, int] = {}
    pending: dict[str, str] = {}
    for index, message in enumerate(messages):
        _check_shape(index, message)
        role = message["role"]
        if index == 0 and role != "user":
            raise ConversationError(
                "first_not_user",
                0,
                f"the conversation starts with a {role!r} message.",
                "messages[0] to be the user's task: {'role': 'user', 'content': task}.",
            )
        if index > 0 and role == messages[index - 1]["role"]:
            other = "an 'assistant'" if role == "user" else "a 'user'"
            raise ConversationError(
                "roles_not_alternating",
                index,
                f"two {role!r} messages in a row (messages[{index - 1}] and messages[{index}]).",
                f"{other} message at messages[{index}]: roles alternate user, assistant, user, ...",
            )
        blocks = _blocks(message)
        if role == "user":
            following = messages[index + 1] if index + 1 < len(messages) else None
            _check_tool_results(index, blocks, pending, seen_ids, answered, following)
            pending = {}
        else:
            _check_declared(index, blocks, declared)
            pending = {b["id"]: b["name"] for b in blocks if b["type"] == "tool_use"}
        if on_message is not None:
            on_message(index, message)
        if role == "assistant":
            _check_unique_ids(index, blocks, seen_ids)
    last = len(messages) - 1
    if messages[last]["role"] == "assistant":
        if pending and not allow_pending:
            wanted = ", ".join(f"{name} (id {tid})" for tid, name in pending.items())
            raise ConversationError(
                "tool_result_missing",
                last,
                f"the conversation ends with the assistant asking for {wanted}, and nothing "
                "answers it.",
                f"run the tool and append a user message at messages[{last + 1}] whose content is "
                f"[{_result_example(next(iter(pending)))}] before calling the model.",
            )
        if not pending:
            raise ConversationError(
                "last_not_user",
                last,
                "the conversation ends with an assistant message.",
                "the last message sent to the model to be a user message (the task or a "
                "tool_result).",
            )


def _result_example(tool_use_id: str) -> str:
    return (
        f"{{'type': 'tool_result', 'tool_use_id': '{tool_use_id}', 'content': <the tool's result>}}"
    )


def _check_shape(index: int, message: object) -> None:
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


def _blocks(message: dict) -> list[dict]:
    content = message["content"]
    return [{"type": "text", "text": content}] if isinstance(content, str) else content


def _check_tool_results(
    index: int,
    blocks: list[dict],
    pending: dict[str, str],
    seen_ids: dict[str, int],
    answered: dict[str, int],
    following: object = None,
) -> None:
    here: set[str] = set()
    seen_text = False
    for position, block in enumerate(blocks):
        if block["type"] != "tool_result":
            seen_text = True
            continue
        tid = block["tool_use_id"]
        if seen_text:
            raise ConversationError(
                "tool_result_not_first",
                index,
                f"content[{position}] is a tool_result that comes after a text block.",
                "the tool_result blocks first in the user message's content, then any text.",
            )
        if tid in here or tid in answered:
            first = index if tid in here else answered[tid]
            raise ConversationError(
                "tool_result_duplicate",
                index,
                f"content[{position}] answers tool_use {tid} again (already answered in "
                f"messages[{first}]).",
                "exactly one tool_result per tool_use: record each tool result once.",
            )
        if tid not in pending:
            if pending:
                asked = ", ".join(f"{tid!r} ({name})" for tid, name in pending.items())
                expected = (
                    "a tool_result for the id the assistant asked for in "
                    f"messages[{index - 1}]: {asked}."
                )
            else:
                expected = f"no tool_result here: messages[{index - 1}] asked for no tool."
            known = f" (it is the id of messages[{seen_ids[tid]}])" if tid in seen_ids else ""
            raise ConversationError(
                "tool_result_unknown_id",
                index,
                f"content[{position}] is a tool_result for {tid!r}, which the assistant message "
                f"just before did not ask for{known}.",
                expected,
            )
        here.add(tid)
    missing = {tid: name for tid, name in pending.items() if tid not in here}
    if missing and len(pending) > 1:
        _check_not_split(index, pending, missing, following)
        asked = ", ".join(f"{name} (id {tid})" for tid, name in pending.items())
        lacking = ", ".join(f"{name} (id {tid})" for tid, name in missing.items())
        raise ConversationError(
            "tool_result_missing",
            index,
            f"messages[{index - 1}] asked for {len(pending)} tools at once ({asked}), and this "
            f"user message answers {len(here)} of them: no tool_result for {lacking}.",
            f"one tool_result per tool_use block of messages[{index - 1}], all in this one user "
            "message.",
        )
    for tid, name in missing.items():
        raise ConversationError(
            "tool_result_missing",
            index,
            f"messages[{index - 1}] asked for tool {name} (id {tid}), and this user message "
            "has no tool_result for it.",
            f"this message's content to start with {_result_example(tid)}.",
        )
    for tid in here:
        answered[tid] = index


def _check_not_split(
    index: int, pending: dict[str, str], missing: dict[str, str], following: object
) -> None:
    """A user message that answers some of a turn's calls, followed by another user message
    that answers the rest: the results were split across messages."""
    if not isinstance(following, dict) or following.get("role") != "user":
        return
    content = following.get("content")
    if not isinstance(content, list):
        return
    later = {
        b.get("tool_use_id")
        for b in content
        if isinstance(b, dict) and b.get("type") == "tool_result"
    }
    if not later & set(missing):
        return
    raise ConversationError(
        "tool_results_split",
        index,
        f"messages[{index - 1}] asked for {len(pending)} tools at once, and their tool_results "
        f"are split: this user message answers {len(pending) - len(missing)} of them and "
        f"messages[{index + 1}] answers more.",
        f"one user message right after messages[{index - 1}] holding a tool_result for every "
        "tool_use block, in the order of the blocks.",
    )


def _check_declared(index: int, blocks: list[dict], declared: set[str] | None) -> None:
    if declared is None:
        return
    for position, block in enumerate(blocks):
        if block["type"] == "tool_use" and block["name"] not in declared:
            names = ", ".join(sorted(declared)) or "none"
            raise ConversationError(
                "tool_undeclared",
                index,
                f"content[{position}] uses the tool {block['name']!r}, which the request's "
                "tools do not declare.",
                f"only declared tools ({names}); pass tools=scenario.tools.",
            )


def _check_unique_ids(index: int, blocks: list[dict], seen_ids: dict[str, int]) -> None:
    for position, block in enumerate(blocks):
        if block["type"] != "tool_use":
            continue
        tid = block["id"]
        if tid in seen_ids:
            raise ConversationError(
                "tool_use_id_duplicate",
                index,
                f"content[{position}] reuses the tool_use id {tid} of messages[{seen_ids[tid]}].",
                "unique tool_use ids: each assistant turn appended once.",
            )
        seen_ids[tid] = index
