"""Pairing each tool_use with its tool_result, as the Messages API requires.

Every call answered once, in the very next user message, results before any text, no result
for a call that was not asked for, ids unique, tools declared. Each check raises
`ConversationError` with the rule's slug from `fake_llm.rules.RULES`.
"""

from __future__ import annotations

from .errors import ConversationError

__all__ = ["check_declared", "check_tool_results", "check_unique_ids", "result_example"]


def result_example(tool_use_id: str) -> str:
    """How a tool_result block answering ``tool_use_id`` is written, for an error's advice."""
    return (
        f"{{'type': 'tool_result', 'tool_use_id': '{tool_use_id}', 'content': <the tool's result>}}"
    )


def check_tool_results(
    index: int,
    blocks: list[dict],
    pending: dict[str, str],
    seen_ids: dict[str, int],
    answered: dict[str, int],
    following: object = None,
) -> None:
    """The user message ``messages[index]`` (its ``blocks``) answers exactly the calls
    ``pending`` (id -> tool name) of the assistant message before it, results first.

    ``seen_ids`` maps every tool_use id so far to its message; ``answered`` every answered id to
    the message answering it (updated here). ``following`` is the next message, if any: it tells
    results split over two messages from results missing.
    """
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
            _refuse_unknown_id(index, position, tid, pending, seen_ids)
        here.add(tid)
    _check_all_answered(index, pending, here, following)
    for tid in here:
        answered[tid] = index


def _refuse_unknown_id(
    index: int, position: int, tid: str, pending: dict[str, str], seen_ids: dict[str, int]
) -> None:
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


def _check_all_answered(
    index: int, pending: dict[str, str], here: set[str], following: object
) -> None:
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
            f"this message's content to start with {result_example(tid)}.",
        )


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
        "tool_use block (the API pairs them by tool_use_id, in any order).",
    )


def check_declared(index: int, blocks: list[dict], declared: set[str] | None) -> None:
    """Every tool_use among ``blocks`` names a tool in ``declared`` (``None``: not checked)."""
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


def check_unique_ids(index: int, blocks: list[dict], seen_ids: dict[str, int]) -> None:
    """No tool_use among ``blocks`` reuses an id of ``seen_ids`` (id -> message); records them."""
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
