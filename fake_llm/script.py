"""What the fake model and the fake tools read of a scenario: the `Script` protocol.

`fake_llm.scenario.Scenario` is the one implementation. The model and the tools depend on this
protocol rather than on the class, so that the class can hand out a model and tools without the
three modules importing each other.
"""

from __future__ import annotations

from typing import Protocol

__all__ = ["Script"]


class Script(Protocol):
    """A scenario as the fake model and the fake tools play it (turns numbered from 1)."""

    @property
    def name(self) -> str:
        """The scenario's name, e.g. ``"support-tickets"``."""

    @property
    def task(self) -> str:
        """The user's task: the content of the first message."""

    @property
    def model_name(self) -> str:
        """The ``model`` field of every response."""

    @property
    def tools(self) -> list[dict]:
        """The Messages API tool definitions ``{"name", "description", "input_schema"}``."""

    @property
    def tool_names(self) -> list[str]:
        """The names of the scenario's tools, in the order they are defined."""

    @property
    def tool_calls(self) -> list[dict]:
        """The scripted tool calls ``{"id", "name", "input"}``, in the order the tools run."""

    @property
    def tool_results(self) -> list[str]:
        """The result of each scripted tool call, in the same order."""

    @property
    def turn_count(self) -> int:
        """How many times a correct loop calls the model: once per tool turn, then the answer."""

    def turn_content(self, turn: int) -> list[dict]:
        """The content blocks of the model's response in ``turn``."""

    def turn_calls(self, turn: int) -> list[dict]:
        """The calls ``{"id", "name", "input"}`` of ``turn``, in block order."""

    def turn_results(self, turn: int) -> list[str]:
        """The results of ``turn``'s calls, in block order."""

    def result_for(self, name: str, tool_input: object) -> str | None:
        """The scripted result of calling ``name`` with ``tool_input``, or ``None``."""
