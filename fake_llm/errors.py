"""The exceptions fake_llm raises; every one is a `FakeLLMError`."""

from __future__ import annotations

__all__ = ["FakeLLMError", "ScenarioError", "ConversationError", "ToolError"]


class FakeLLMError(Exception):
    """Base class of every error fake_llm raises on purpose."""


class ScenarioError(FakeLLMError):
    """A scenario is unknown, or its file does not follow the scenario format.

    The message names the file and the field path, e.g.
    ``support-tickets.json: turns[2].content[1].input: missing required key 'period'``.
    """


class ConversationError(FakeLLMError):
    """The fake model refused a request, as the real Messages API (or the script) would.

    Attributes:
        rule: a short slug naming the rule that was broken, e.g. ``"tool_result_missing"``
            (all slugs are listed in ``fake_llm.rules.RULES``).
        index: the index in ``messages`` of the message that breaks it, or ``None`` when the
            problem is not one message (an empty list, the ``tools`` argument).
        expected: what the model expected instead, in words.
        status_code: 400, as the API's answer to a request it refuses.
        body: the error as the API's 400 response body: ``{"type": "error", "error":
            {"type": "invalid_request_error", "message": ...}}``.
    """

    status_code = 400

    def __init__(self, rule: str, index: int | None, problem: str, expected: str) -> None:
        self.rule = rule
        self.index = index
        self.problem = problem
        self.expected = expected
        where = "the request" if index is None else f"messages[{index}]"
        super().__init__(f"[{rule}] {where}: {problem} Expected: {expected}")

    def __reduce__(self):
        return type(self), (self.rule, self.index, self.problem, self.expected)

    @property
    def body(self) -> dict:
        """The refusal shaped like the body of the Messages API's 400 response."""
        return {
            "type": "error",
            "error": {"type": "invalid_request_error", "message": str(self)},
        }


class ToolError(FakeLLMError):
    """A fake tool was called with a name or an input the scenario has no result for.

    Attributes:
        tool: the tool name that was called.
        expected: what the script expects instead, in words.
    """

    def __init__(self, tool: object, problem: str, expected: str) -> None:
        self.tool = tool
        self.problem = problem
        self.expected = expected
        super().__init__(f"{problem} Expected: {expected}")

    def __reduce__(self):
        return type(self), (self.tool, self.problem, self.expected)
