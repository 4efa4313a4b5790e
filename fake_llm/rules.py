"""The Messages API's structural rules for a conversation, checked one message at a time.

`validate_conversation` applies them alone; the fake model applies them together with its
script (see `fake_llm.model`), through the ``on_message`` hook of `walk_conversation`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from .errors import ConversationError
from .message_shape import check_message_shape, content_blocks
from .tool_pairing import check_declared, check_tool_results, check_unique_ids, result_example

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
        check_message_shape(index, message)
        _check_role_order(index, messages)
        role = message["role"]
        blocks = content_blocks(message)
        if role == "user":
            following = messages[index + 1] if index + 1 < len(messages) else None
            check_tool_results(index, blocks, pending, seen_ids, answered, following)
            pending = {}
        else:
            check_declared(index, blocks, declared)
            pending = {b["id"]: b["name"] for b in blocks if b["type"] == "tool_use"}
        if on_message is not None:
            on_message(index, message)
        if role == "assistant":
            check_unique_ids(index, blocks, seen_ids)
    _check_ending(messages, pending, allow_pending)


def _check_role_order(index: int, messages: list) -> None:
    """The conversation starts with the user, and roles alternate up to ``messages[index]``."""
    role = messages[index]["role"]
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


def _check_ending(messages: list, pending: dict[str, str], allow_pending: bool) -> None:
    """The conversation ends with a user message, or (``allow_pending``) an unanswered call."""
    last = len(messages) - 1
    if messages[last]["role"] != "assistant":
        return
    if pending and not allow_pending:
        wanted = ", ".join(f"{name} (id {tid})" for tid, name in pending.items())
        raise ConversationError(
            "tool_result_missing",
            last,
            f"the conversation ends with the assistant asking for {wanted}, and nothing "
            "answers it.",
            f"run the tool and append a user message at messages[{last + 1}] whose content is "
            f"[{result_example(next(iter(pending)))}] before calling the model.",
        )
    if not pending:
        raise ConversationError(
            "last_not_user",
            last,
            "the conversation ends with an assistant message.",
            "the last message sent to the model to be a user message (the task or a "
            "tool_result).",
        )
