"""The fake tools: ``execute_tool(name, input) -> str`` with a ledger of every execution."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import dataclass, field

from .errors import ToolError
from .schema import value_problems
from .script import Script

__all__ = ["FakeTools", "LedgerEntry"]


@dataclass(frozen=True)
class LedgerEntry:
    """One execution of a fake tool.

    Attributes:
        index: its place in execution order, from 1.
        name: the tool's name.
        input: the input it was called with (a copy).
        result: the string it returned.
    """

    index: int
    name: str
    input: dict = field(repr=False)
    result: str = field(repr=False)

    def to_dict(self) -> dict:
        """The entry as a plain JSON-ready dict ``{"index", "name", "input", "result"}``."""
        return {
            "index": self.index,
            "name": self.name,
            "input": copy.deepcopy(self.input),
            "result": self.result,
        }

    @classmethod
    def from_dict(cls, data: dict) -> LedgerEntry:
        """The entry ``to_dict`` produced, back again."""
        return cls(int(data["index"]), data["name"], copy.deepcopy(data["input"]), data["result"])


class FakeTools:
    """``execute_tool(name, input) -> str``: the scenario's scripted result for that call.

    Results are looked up by tool name and input (compared by value), so the same call made
    twice returns the same result, and both executions are recorded in `ledger`. An unknown
    tool, an input that does not fit the tool's ``input_schema``, or one the script has no
    result for raises `ToolError`.

    Attributes:
        scenario: the `Scenario` whose tools it plays.
    """

    def __init__(
        self, scenario: Script, on_execute: Callable[[LedgerEntry], object] | None = None
    ) -> None:
        self.scenario = scenario
        self._on_execute = on_execute
        self._ledger: list[LedgerEntry] = []
        self._schemas = {tool["name"]: tool["input_schema"] for tool in scenario.tools}

    def __repr__(self) -> str:
        return f"<FakeTools {self.scenario.name!r}: {len(self._ledger)} executions>"

    @property
    def ledger(self) -> list[LedgerEntry]:
        """Every execution so far, in order (a copy)."""
        return copy.deepcopy(self._ledger)

    def __call__(self, name: str, input: dict) -> str:
        if name not in self._schemas:
            raise ToolError(
                name,
                f"unknown tool {name!r}: the scenario {self.scenario.name!r} has no tool "
                "by that name.",
                f"one of this scenario's tools: {', '.join(self._schemas)} "
                "(the tool_use block's 'name').",
            )
        calls = [call for call in self.scenario.tool_calls if call["name"] == name]
        scripted = "; ".join(json.dumps(call["input"], ensure_ascii=False) for call in calls)
        expected = (
            f"the input of the tool_use block, unchanged; the script calls {name} with {scripted}."
        )
        if not isinstance(input, dict):
            raise ToolError(
                name, f"the input for {name} is a {type(input).__name__}, not a dict.", expected
            )
        problems = value_problems(input, self._schemas[name], "input")
        if problems:
            raise ToolError(
                name,
                f"the input for {name} does not fit its input_schema: {'; '.join(problems)}.",
                expected,
            )
        result = self.scenario.result_for(name, input)
        if result is None:
            shown = json.dumps(input, ensure_ascii=False, sort_keys=True)
            raise ToolError(
                name, f"the script has no result for {name} with input {shown}.", expected
            )
        entry = LedgerEntry(len(self._ledger) + 1, name, copy.deepcopy(input), result)
        self._ledger.append(entry)
        if self._on_execute is not None:
            self._on_execute(entry)
        return result
