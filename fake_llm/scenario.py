"""Scenarios: the `Scenario` a scenario file becomes, and finding and loading those files.

The file format is described in ``fake_llm/README.md``; `fake_llm.scenario_file` checks it.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

from .errors import ScenarioError
from .ids import canonical_json
from .model import FakeModel, build_response
from .scenario_fields import InvalidField
from .scenario_file import parse_scenario
from .tools import FakeTools

__all__ = ["Scenario", "load_scenario", "list_scenarios", "SCENARIO_DIR"]

SCENARIO_DIR = Path(__file__).resolve().parent / "scenarios"


class Scenario:
    """One scripted run: a task, its tools, the model's turns and the tools' results.

    Every accessor returns a fresh copy, so nothing a caller does to it changes the scenario.
    Turns are numbered from 1; tool call ``k`` is made in turn ``k``, and the last turn is the
    final answer (``stop_reason == "end_turn"``).
    """

    def __init__(
        self,
        *,
        name: str,
        description: str,
        task: str,
        model_name: str,
        tools: list[dict],
        turns: list[dict],
        path: Path,
    ) -> None:
        self._name = name
        self._description = description
        self._task = task
        self._model_name = model_name
        self._tools = tools
        self._turns = turns
        self._path = path

    def __repr__(self) -> str:
        return f"<Scenario {self._name!r}: {len(self.tool_results)} tool calls>"

    @property
    def name(self) -> str:
        """The scenario's name, e.g. ``"support-tickets"``."""
        return self._name

    @property
    def description(self) -> str:
        """One or two sentences on what the scenario is for."""
        return self._description

    @property
    def task(self) -> str:
        """The user's task: the content of the first message."""
        return self._task

    @property
    def model_name(self) -> str:
        """The ``model`` field of every response (``"fake-claude"`` unless the file sets one)."""
        return self._model_name

    @property
    def path(self) -> Path:
        """The scenario file this scenario was loaded from."""
        return self._path

    @property
    def tools(self) -> list[dict]:
        """The Messages API tool definitions ``{"name", "description", "input_schema"}``."""
        return copy.deepcopy(self._tools)

    @property
    def tool_names(self) -> list[str]:
        """The names of the scenario's tools, in the order they are defined."""
        return [tool["name"] for tool in self._tools]

    @property
    def tool_calls(self) -> list[dict]:
        """The scripted tool calls ``{"id", "name", "input"}``, in order (a copy).

        Tool call ``k`` is the k-th call the tools run: in a turn with several ``tool_use``
        blocks, one per block, in the order of the blocks.
        """
        return [copy.deepcopy(call) for turn in self._turns[:-1] for call in turn["calls"]]

    @property
    def tool_results(self) -> list[str]:
        """The result of each scripted tool call, in the same order."""
        return [result for turn in self._turns[:-1] for result in turn["results"]]

    @property
    def parallel(self) -> bool:
        """Whether some turn asks for several tools at once (several ``tool_use`` blocks)."""
        return any(len(turn.get("calls", ())) > 1 for turn in self._turns)

    def turn_calls(self, turn: int) -> list[dict]:
        """The calls ``{"id", "name", "input"}`` of ``turn`` (1-based), in block order (a copy).

        Empty for the final answer.
        """
        return copy.deepcopy(self._turns[turn - 1].get("calls", []))

    def turn_results(self, turn: int) -> list[str]:
        """The results of ``turn``'s calls, in block order (empty for the final answer)."""
        return list(self._turns[turn - 1].get("results", []))

    @property
    def turn_count(self) -> int:
        """How many times a correct loop calls the model: once per tool call, then the answer."""
        return len(self._turns)

    def turn_content(self, turn: int) -> list[dict]:
        """The content blocks of the model's response in ``turn`` (1-based), as a copy."""
        return copy.deepcopy(self._turns[turn - 1]["content"])

    def conversation(self) -> list[dict]:
        """The ``messages`` a correct loop (the lesson's) holds when it stops.

        The user's task, then for each tool turn the assistant message that asked for its calls
        and ONE user message carrying a ``tool_result`` for each call, in the order of the
        blocks. The final answer is not appended, as in the lesson's loop.
        """
        messages: list[dict] = [{"role": "user", "content": self._task}]
        for turn in self._turns[:-1]:
            messages.append({"role": "assistant", "content": copy.deepcopy(turn["content"])})
            messages.append(
                {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": call["id"], "content": result}
                        for call, result in zip(turn["calls"], turn["results"], strict=True)
                    ],
                }
            )
        return messages

    def response(self, turn: int) -> dict:
        """The model's response in ``turn`` (1-based) to the request a correct loop sends then."""
        if not 1 <= turn <= self.turn_count:
            raise ValueError(f"turn must be between 1 and {self.turn_count}, got {turn}")
        return build_response(self, turn, self.conversation()[: 2 * turn - 1], self._tools)

    def responses(self) -> list[dict]:
        """Every response the model gives a correct loop, in order (the last one ends the turn)."""
        return [self.response(turn) for turn in range(1, self.turn_count + 1)]

    def final_response(self) -> dict:
        """The last response: the final answer, with ``stop_reason == "end_turn"``."""
        return self.response(self.turn_count)

    def model(self):
        """A fresh fake model for this scenario: ``call_model(tools=..., messages=...)``."""
        return FakeModel(self)

    def executor(self, on_execute: Callable | None = None):
        """Fresh fake tools for this scenario: ``execute_tool(name, input) -> str``, with a ledger.

        ``on_execute``, if given, is called with each `LedgerEntry` as it is recorded (before the
        result is returned), e.g. to stream the ledger out of a process that may be killed.
        """
        return FakeTools(self, on_execute=on_execute)

    def result_for(self, name: str, tool_input: object) -> str | None:
        """The scripted result of calling ``name`` with ``tool_input``, or ``None``."""
        for turn in self._turns[:-1]:
            for call, result in zip(turn["calls"], turn["results"], strict=True):
                if call["name"] == name and (
                    canonical_json(call["input"]) == canonical_json(tool_input)
                ):
                    return result
        return None


def list_scenarios() -> list[str]:
    """The names of the shipped scenarios, sorted."""
    return sorted(path.stem for path in SCENARIO_DIR.glob("*.json"))


def load_scenario(name_or_path: str | Path) -> Scenario:
    """Load a shipped scenario by name (``"support-tickets"``) or any scenario file by path.

    Raises `ScenarioError` for an unknown name (listing the known ones) or a file that does not
    follow the format (naming the file and the field).
    """
    text = str(name_or_path)
    if isinstance(name_or_path, Path) or text.endswith(".json") or len(Path(text).parts) > 1:
        path = Path(name_or_path)
        if not path.is_file():
            raise ScenarioError(f"{path}: no such scenario file.")
    else:
        path = SCENARIO_DIR / f"{name_or_path}.json"
        if not path.is_file():
            known = ", ".join(list_scenarios())
            raise ScenarioError(
                f"unknown scenario {name_or_path!r}; the known scenarios are: {known}. "
                "To load your own scenario file, pass its path."
            )
    path = path.resolve()
    stat = path.stat()
    return _load_cached(path, stat.st_mtime_ns, stat.st_size)


@lru_cache(maxsize=32)
def _load_cached(path: Path, mtime_ns: int, size: int) -> Scenario:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as error:
        raise ScenarioError(f"{path.name}: cannot read the file: {error}") from None
    except json.JSONDecodeError as error:
        raise ScenarioError(f"{path.name}: not valid JSON: {error}") from None
    try:
        return Scenario(**parse_scenario(data, path))
    except InvalidField as problem:
        where = f"{problem.path}: " if problem.path else ""
        raise ScenarioError(f"{path.name}: {where}{problem.message}") from None

