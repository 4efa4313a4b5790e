"""Scenarios: loading a scenario file, validating it, and the `Scenario` it becomes.

The file format is described in ``fake_llm/README.md``.
"""

from __future__ import annotations

import copy
import json
import re
import string
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

from .errors import ScenarioError
from .ids import canonical_json, digest_int, tool_use_id
from .schema import schema_problems, value_problems

__all__ = ["Scenario", "load_scenario", "list_scenarios", "SCENARIO_DIR"]

SCENARIO_DIR = Path(__file__).resolve().parent / "scenarios"
DEFAULT_MODEL = "fake-claude"
_TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_SCENARIO_NAME = re.compile(r"^[a-z0-9][a-z0-9-]*$")


class _Invalid(Exception):
    def __init__(self, path: str, message: str) -> None:
        super().__init__(path, message)
        self.path = path
        self.message = message


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
        from .model import build_response

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
        from .model import FakeModel

        return FakeModel(self)

    def executor(self, on_execute: Callable | None = None):
        """Fresh fake tools for this scenario: ``execute_tool(name, input) -> str``, with a ledger.

        ``on_execute``, if given, is called with each `LedgerEntry` as it is recorded (before the
        result is returned), e.g. to stream the ledger out of a process that may be killed.
        """
        from .tools import FakeTools

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
        return _build(data, path)
    except _Invalid as problem:
        where = f"{problem.path}: " if problem.path else ""
        raise ScenarioError(f"{path.name}: {where}{problem.message}") from None


def _keys(value: object, path: str, required: dict[str, type], optional: dict[str, type]) -> dict:
    if not isinstance(value, dict):
        raise _Invalid(path, f"must be an object, got {type(value).__name__}")
    for key in value:
        if key not in required and key not in optional:
            known = ", ".join(list(required) + list(optional))
            raise _Invalid(_join(path, key), f"unknown field (known fields: {known})")
    for key, kind in {**required, **optional}.items():
        if key not in value:
            if key in required:
                raise _Invalid(_join(path, key), "missing required field")
            continue
        if not isinstance(value[key], kind) or isinstance(value[key], bool) and kind is not bool:
            raise _Invalid(
                _join(path, key), f"must be {_kind_name(kind)}, got {type(value[key]).__name__}"
            )
        if kind is str and not value[key].strip():
            raise _Invalid(_join(path, key), "must not be empty")
    return value


def _kind_name(kind: type | tuple) -> str:
    names = {
        str: "a string",
        int: "an integer",
        list: "a list",
        dict: "an object",
        bool: "true or false",
    }
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join(names.get(k, k.__name__) for k in kinds)


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _build(data: object, path: Path) -> Scenario:
    _keys(
        data,
        "",
        {"name": str, "description": str, "task": str, "tools": list, "turns": list},
        {"model": str},
    )
    if not _SCENARIO_NAME.match(data["name"]):
        raise _Invalid(
            "name", "must be lowercase letters, digits and dashes, e.g. 'support-tickets'"
        )
    if data["name"] != path.stem:
        raise _Invalid(
            "name", f"is {data['name']!r}, but the file is named {path.name!r}; make them match"
        )
    tools = _build_tools(data["tools"])
    turns = _build_turns(data["turns"], data["name"], {tool["name"]: tool for tool in tools})
    return Scenario(
        name=data["name"],
        description=data["description"],
        task=data["task"],
        model_name=data.get("model", DEFAULT_MODEL),
        tools=tools,
        turns=turns,
        path=path,
    )


def _build_tools(tools: list) -> list[dict]:
    if not tools:
        raise _Invalid("tools", "must declare at least one tool")
    names: set[str] = set()
    for position, tool in enumerate(tools):
        where = f"tools[{position}]"
        _keys(tool, where, {"name": str, "description": str, "input_schema": dict}, {})
        if not _TOOL_NAME.match(tool["name"]):
            raise _Invalid(f"{where}.name", "must match ^[a-zA-Z0-9_-]{1,64}$, as the API requires")
        if tool["name"] in names:
            raise _Invalid(f"{where}.name", f"{tool['name']!r} is declared twice")
        names.add(tool["name"])
        schema = tool["input_schema"]
        if schema.get("type") != "object":
            raise _Invalid(f"{where}.input_schema.type", 'must be "object", as the API requires')
        problems = schema_problems(schema, f"{where}.input_schema")
        if problems:
            raise _Invalid(*problems[0])
    return copy.deepcopy(tools)


def _build_turns(turns: list, scenario: str, tools: dict[str, dict]) -> list[dict]:
    if len(turns) < 2:
        raise _Invalid("turns", "needs at least one tool turn and a final answer turn")
    built = []
    seen_calls: dict[str, tuple[int, str]] = {}
    last = len(turns) - 1
    for position, turn in enumerate(turns):
        where = f"turns[{position}]"
        if position < last:
            _keys(turn, where, {"content": list}, {"result": (str, dict), "results": list})
            if "result" not in turn and "results" not in turn:
                raise _Invalid(f"{where}.result", "missing required field")
            if "result" in turn and "results" in turn:
                raise _Invalid(
                    where,
                    "a tool turn has either 'result' (one tool_use block) or 'results' (one per "
                    "tool_use block, for a turn with several), not both",
                )
        else:
            _keys(turn, where, {"content": list}, {})
        several = "results" in turn
        content = _build_content(
            turn["content"], f"{where}.content", position == last, tools, several
        )
        entry: dict = {"content": content}
        if position < last:
            blocks = [b for b in content if b["type"] == "tool_use"]
            raw = turn["results"] if several else [turn["result"]]
            field = "results" if several else "result"
            if len(raw) != len(blocks):
                raise _Invalid(
                    f"{where}.results",
                    f"has {len(raw)} results for {len(blocks)} tool_use blocks; give one result "
                    "per block, in the order of the blocks",
                )
            entry["calls"], entry["results"] = [], []
            for j, (block, result) in enumerate(zip(blocks, raw, strict=True)):
                at = f"{where}.{field}" + (f"[{j}]" if several else "")
                block["id"] = tool_use_id(scenario, position + 1, j)
                entry["calls"].append(
                    {"id": block["id"], "name": block["name"],
                     "input": copy.deepcopy(block["input"])}
                )
                if isinstance(result, dict):
                    seed = position + 1 if j == 0 else f"{position + 1}.{j}"
                    result = _generate(result, at, scenario, seed)
                elif not isinstance(result, str):
                    kind = type(result).__name__
                    raise _Invalid(at, f"must be a string or an object, got {kind}")
                entry["results"].append(result)
                key = block["name"] + "\x00" + canonical_json(block["input"])
                if key in seen_calls and seen_calls[key][1] != result:
                    raise _Invalid(
                        at,
                        f"{seen_calls[key][0]} calls {block['name']} with the same input but a "
                        "different result; the fake tools look results up by name and input, so "
                        "they must agree",
                    )
                seen_calls[key] = (f"turns[{position}]" if not several else at, result)
        built.append(entry)
    return built


def _build_content(
    content: list, where: str, final: bool, tools: dict[str, dict], several: bool = False
) -> list[dict]:
    if not content:
        raise _Invalid(where, "must hold at least one content block")
    tool_uses = 0
    blocks = []
    for position, block in enumerate(content):
        at = f"{where}[{position}]"
        if not isinstance(block, dict) or block.get("type") not in ("text", "tool_use"):
            raise _Invalid(f"{at}.type", 'must be "text" or "tool_use"')
        if block["type"] == "text":
            _keys(block, at, {"type": str, "text": str}, {})
            blocks.append({"type": "text", "text": block["text"]})
            continue
        _keys(block, at, {"type": str, "name": str, "input": dict}, {})
        tool_uses += 1
        if block["name"] not in tools:
            raise _Invalid(
                f"{at}.name", f"{block['name']!r} is not declared in tools ({', '.join(tools)})"
            )
        problems = value_problems(block["input"], tools[block["name"]]["input_schema"], "input")
        if problems:
            raise _Invalid(
                f"{at}.input",
                "; ".join(problems) + f" (checked against {block['name']}'s input_schema)",
            )
        blocks.append(
            {
                "type": "tool_use",
                "id": "",
                "name": block["name"],
                "input": copy.deepcopy(block["input"]),
            }
        )
    if final and tool_uses:
        raise _Invalid(where, "the last turn is the final answer: text blocks only, no tool_use")
    if final and not blocks:
        raise _Invalid(where, "the final answer needs a text block")
    if not final and not several and tool_uses != 1:
        raise _Invalid(
            where,
            f"a tool turn has exactly one tool_use block (the course's rule), found {tool_uses}; "
            "a turn that asks for several tools at once gives 'results', one per block",
        )
    if not final and several and tool_uses < 2:
        raise _Invalid(
            where,
            f"a turn with 'results' asks for several tools at once: two or more tool_use "
            f"blocks, found {tool_uses} (one call takes 'result')",
        )
    return blocks


def _generate(spec: dict, where: str, scenario: str, turn: int) -> str:
    _keys(spec, where, {"generate": dict}, {})
    where = f"{where}.generate"
    gen = _keys(
        spec["generate"],
        where,
        {"rows": int, "row": str},
        {"header": str, "footer": str, "choices": dict, "ranges": dict},
    )
    if not 1 <= gen["rows"] <= 100_000:
        raise _Invalid(f"{where}.rows", "must be between 1 and 100000")
    pickers: dict[str, Callable[[int], object]] = {"n": lambda n: n}
    for field, options in gen.get("choices", {}).items():
        if (
            not isinstance(options, list)
            or not options
            or not all(isinstance(o, str) for o in options)
        ):
            raise _Invalid(f"{where}.choices.{field}", "must be a non-empty list of strings")
        pickers[field] = lambda n, f=field, o=options: o[digest_int(scenario, turn, n, f) % len(o)]
    for field, bounds in gen.get("ranges", {}).items():
        valid = (
            isinstance(bounds, list) and len(bounds) == 2 and all(type(b) is int for b in bounds)
        )
        if not valid or bounds[0] > bounds[1]:
            raise _Invalid(
                f"{where}.ranges.{field}", "must be [low, high], two integers with low <= high"
            )
        low, span = bounds[0], bounds[1] - bounds[0] + 1
        pickers[field] = lambda n, f=field, lo=low, s=span: (
            lo + digest_int(scenario, turn, n, f) % s
        )
    try:
        fields = [
            name for _, name, _, _ in string.Formatter().parse(gen["row"]) if name is not None
        ]
    except ValueError as error:
        raise _Invalid(f"{where}.row", f"not a valid template: {error}") from None
    for name in fields:
        if name not in pickers:
            known = ", ".join("{" + k + "}" for k in pickers)
            raise _Invalid(f"{where}.row", f"unknown placeholder {{{name}}} (known: {known})")
    lines = [gen["header"]] if "header" in gen else []
    try:
        for n in range(1, gen["rows"] + 1):
            lines.append(gen["row"].format_map({name: pickers[name](n) for name in set(fields)}))
    except (ValueError, TypeError) as error:
        raise _Invalid(f"{where}.row", f"cannot fill the template: {error}") from None
    if "footer" in gen:
        lines.append(gen["footer"])
    return "\n".join(lines)
