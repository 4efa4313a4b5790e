"""The fake model: a strict, stateless ``call_model(tools=..., messages=...)`` on a script."""

from __future__ import annotations

import json
import math

from .errors import ConversationError
from .ids import canonical_json, message_id
from .message_shape import content_blocks
from .normalize import normalize_content, normalize_conversation, result_text
from .rules import declared_tool_names, walk_conversation
from .script import Script

__all__ = ["FakeModel", "build_response", "estimate_tokens"]


def estimate_tokens(value: object) -> int:
    """A deterministic token count: about one token per four characters of ``value`` as JSON."""
    return max(
        1, math.ceil(len(json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)) / 4)
    )


def build_response(scenario: Script, turn: int, messages: list, tools: object) -> dict:
    """The response dict for ``turn`` (1-based) of ``scenario``, given the request it answers.

    ``input_tokens`` is counted on the request as the API reads it (`fake_llm.normalize`), so
    every way of writing one conversation costs the same.
    """
    content = scenario.turn_content(turn)
    final = turn == scenario.turn_count
    return {
        "id": message_id(scenario.name, turn),
        "type": "message",
        "role": "assistant",
        "model": scenario.model_name,
        "content": content,
        "stop_reason": "end_turn" if final else "tool_use",
        "stop_sequence": None,
        "usage": {
            "input_tokens": estimate_tokens(
                {"messages": normalize_conversation(messages), "tools": tools}
            ),
            "output_tokens": estimate_tokens(content),
        },
    }


class FakeModel:
    """``call_model(*, tools, messages, **ignored) -> dict``: the scenario's next response.

    Stateless with respect to the script: the turn it answers is the number of assistant
    messages in ``messages`` plus one, so a loop resumed from a checkpoint gets the next turn.
    It refuses, with a `ConversationError`, every request the real API would refuse and every
    conversation that departs from the script. It never changes what it is given.

    Attributes:
        scenario: the `Scenario` it plays.
        calls: how many times it was called (refused calls included).
    """

    def __init__(self, scenario: Script) -> None:
        self.scenario = scenario
        self.calls = 0

    def __repr__(self) -> str:
        return f"<FakeModel {self.scenario.name!r}: {self.calls} calls>"

    def __call__(self, *, tools: object, messages: object, **ignored: object) -> dict:
        self.calls += 1
        self._check_tools(tools)
        script = _ScriptCheck(self.scenario, messages)
        walk_conversation(messages, tools, on_message=script)
        return build_response(self.scenario, script.assistant_turns + 1, messages, tools)

    def _check_tools(self, tools: object) -> None:
        declared = declared_tool_names(tools)
        missing = [name for name in self.scenario.tool_names if name not in declared]
        if missing:
            raise ConversationError(
                "tool_undeclared",
                None,
                f"tools does not declare {', '.join(missing)}, which the scenario's model uses.",
                f"tools=scenario.tools, declaring {', '.join(self.scenario.tool_names)}.",
            )


class _ScriptCheck:
    """Called on each message by the rules walk: does the conversation follow the script so far?"""

    def __init__(self, scenario: Script, messages: list) -> None:
        self.scenario = scenario
        self.messages = messages
        self.assistant_turns = 0
        self._contents = [
            canonical_json(normalize_content(scenario.turn_content(t)))
            for t in range(1, scenario.turn_count + 1)
        ]
        last = scenario.turn_count
        self._turn_calls = [scenario.turn_calls(t) for t in range(1, last)]
        self._turn_results = [scenario.turn_results(t) for t in range(1, last)]
        self._results = scenario.tool_results

    def __call__(self, index: int, message: dict) -> None:
        if index == 0:
            self._check_task(message)
        elif message["role"] == "assistant":
            self.assistant_turns += 1
            self._check_assistant(index, message, self.assistant_turns)
        else:
            self._check_result(index, message, index // 2)

    def _check_task(self, message: dict) -> None:
        if normalize_content(message["content"]) != normalize_content(self.scenario.task):
            raise ConversationError(
                "task_mismatch",
                0,
                f"the first message is not this scenario's task ({_preview(message['content'])}).",
                f"{{'role': 'user', 'content': {self.scenario.task!r}}}.",
            )

    def _describe(self, turn: int) -> str:
        if turn == self.scenario.turn_count:
            return f"turn {turn}, the final answer"
        calls = self._turn_calls[turn - 1]
        if len(calls) == 1:
            return f"turn {turn}, the tool_use of {calls[0]['name']} (id {calls[0]['id']})"
        named = ", ".join(f"{c['name']} (id {c['id']})" for c in calls)
        return f"turn {turn}, the {len(calls)} tool_use blocks of {named}"

    def _check_assistant(self, index: int, message: dict, turn: int) -> None:
        final = self.scenario.turn_count
        got = canonical_json(normalize_content(message["content"]))
        if turn >= final and (turn > final or got == self._contents[-1]):
            raise ConversationError(
                "script_ended",
                index,
                f"this message is the script's final answer (turn {final}, "
                "stop_reason 'end_turn'), yet the loop called the model again: the script has "
                "ended.",
                "the loop to stop when response['stop_reason'] == 'end_turn' and not call "
                "the model again (the lesson's loop does not append the final answer to messages).",
            )
        if got == self._contents[turn - 1]:
            return
        others = [t for t, content in enumerate(self._contents, start=1) if content == got]
        if others and others[0] < turn:
            problem = (
                f"this assistant message repeats {self._describe(others[0])}, which is already at "
                f"messages[{2 * others[0] - 1}]: was a message appended twice?"
            )
        elif others:
            problem = (
                f"this assistant message is {self._describe(others[0])}, but the script is at turn "
                f"{turn}: was a message dropped, or were messages reordered?"
            )
        else:
            problem = (
                f"this assistant message is not the content the model returned in turn {turn} "
                f"({_preview(message['content'])})."
            )
        raise ConversationError(
            "script_mismatch",
            index,
            problem,
            f"{self._describe(turn)}: append "
            "{'role': 'assistant', 'content': response['content']} "
            "with the response's content unchanged.",
        )

    def _check_result(self, index: int, message: dict, turn: int) -> None:
        calls = self._turn_calls[turn - 1]
        results = self._turn_results[turn - 1]
        blocks = content_blocks(message)
        # The rules walk has already checked that this message answers every call of the turn
        # (each once, none unknown) and that its tool_result blocks come first. The API pairs a
        # result with its call by tool_use_id, in no order among one turn's results.
        answers = {b["tool_use_id"]: b for b in blocks if b["type"] == "tool_result"}
        extra = len(normalize_content(message["content"])) - len(answers)
        for call, wanted in zip(calls, results, strict=True):
            self._check_one_result(index, call, wanted, answers[call["id"]], extra, len(calls))

    def _check_one_result(
        self,
        index: int,
        call: dict,
        wanted: str,
        block: dict,
        extra: int,
        calls: int,
    ) -> None:
        result = result_text(block.get("content"))
        what = "one tool_result block" if calls == 1 else "a tool_result"
        expected = (
            f"{what} for {call['name']} (id {call['id']}) whose content is the "
            f"string execute_tool returned ({len(wanted)} characters, starting "
            f"{_preview(wanted)})."
        )
        if result != wanted:
            same_as = [k for k, other in enumerate(self._results, start=1) if other == result]
            where = f" (it is the result of tool call {same_as[0]})" if same_as else ""
            raise ConversationError(
                "tool_result_changed",
                index,
                f"the tool_result for {call['name']} (id {call['id']}) is not what the tool "
                f"returned{where}: "
                f"got {len(result)} characters starting {_preview(result)}.",
                expected,
            )
        if extra > 0 or block.get("is_error"):
            what = (
                "is marked is_error"
                if block.get("is_error")
                else f"has {extra} content block{'s' if extra > 1 else ''} beside the "
                "tool_result blocks"
            )
            raise ConversationError(
                "script_mismatch", index, f"this tool_result message {what}.", expected
            )


def _preview(value: object, limit: int = 60) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return repr(text if len(text) <= limit else text[: limit - 3] + "...")
