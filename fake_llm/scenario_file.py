"""A scenario file's JSON, checked field by field and turned into what a `Scenario` holds.

The format is in ``fake_llm/README.md``. Every problem raises `InvalidField` naming the field;
tool_use ids are derived here (`fake_llm.ids.tool_use_id`), and generated results expanded.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path

from .generated_results import generate_result
from .ids import canonical_json, tool_use_id
from .scenario_fields import InvalidField, check_keys
from .schema import schema_problems, value_problems

__all__ = ["DEFAULT_MODEL", "parse_scenario"]

DEFAULT_MODEL = "fake-claude"
_TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_SCENARIO_NAME = re.compile(r"^[a-z0-9][a-z0-9-]*$")


def parse_scenario(data: object, path: Path) -> dict:
    """The keyword arguments of `Scenario` for the file at ``path`` whose JSON is ``data``.

    Raises `InvalidField` for the first field that breaks the format.
    """
    check_keys(
        data,
        "",
        {"name": str, "description": str, "task": str, "tools": list, "turns": list},
        {"model": str},
    )
    if not _SCENARIO_NAME.match(data["name"]):
        raise InvalidField(
            "name", "must be lowercase letters, digits and dashes, e.g. 'support-tickets'"
        )
    if data["name"] != path.stem:
        raise InvalidField(
            "name", f"is {data['name']!r}, but the file is named {path.name!r}; make them match"
        )
    tools = _build_tools(data["tools"])
    turns = _build_turns(data["turns"], data["name"], {tool["name"]: tool for tool in tools})
    return {
        "name": data["name"],
        "description": data["description"],
        "task": data["task"],
        "model_name": data.get("model", DEFAULT_MODEL),
        "tools": tools,
        "turns": turns,
        "path": path,
    }


def _build_tools(tools: list) -> list[dict]:
    if not tools:
        raise InvalidField("tools", "must declare at least one tool")
    names: set[str] = set()
    for position, tool in enumerate(tools):
        where = f"tools[{position}]"
        check_keys(tool, where, {"name": str, "description": str, "input_schema": dict}, {})
        if not _TOOL_NAME.match(tool["name"]):
            raise InvalidField(
                f"{where}.name", "must match ^[a-zA-Z0-9_-]{1,64}$, as the API requires"
            )
        if tool["name"] in names:
            raise InvalidField(f"{where}.name", f"{tool['name']!r} is declared twice")
        names.add(tool["name"])
        schema = tool["input_schema"]
        if schema.get("type") != "object":
            raise InvalidField(
                f"{where}.input_schema.type", 'must be "object", as the API requires'
            )
        problems = schema_problems(schema, f"{where}.input_schema")
        if problems:
            raise InvalidField(*problems[0])
    return copy.deepcopy(tools)



def _build_turns(turns: list, scenario: str, tools: dict[str, dict]) -> list[dict]:
    if len(turns) < 2:
        raise InvalidField("turns", "needs at least one tool turn and a final answer turn")
    built = []
    seen_calls: dict[str, tuple[str, str]] = {}
    last = len(turns) - 1
    for position, turn in enumerate(turns):
        where = f"turns[{position}]"
        _check_turn_fields(turn, where, final=position == last)
        several = "results" in turn
        content = _build_content(
            turn["content"], f"{where}.content", position == last, tools, several
        )
        entry: dict = {"content": content}
        if position < last:
            entry["calls"], entry["results"] = _build_calls(
                turn, content, position, scenario, seen_calls
            )
        built.append(entry)
    return built


def _check_turn_fields(turn: object, where: str, *, final: bool) -> None:
    if final:
        check_keys(turn, where, {"content": list}, {})
        return
    check_keys(turn, where, {"content": list}, {"result": (str, dict), "results": list})
    if "result" not in turn and "results" not in turn:
        raise InvalidField(f"{where}.result", "missing required field")
    if "result" in turn and "results" in turn:
        raise InvalidField(
            where,
            "a tool turn has either 'result' (one tool_use block) or 'results' (one per "
            "tool_use block, for a turn with several), not both",
        )


def _build_calls(
    turn: dict,
    content: list[dict],
    position: int,
    scenario: str,
    seen_calls: dict[str, tuple[str, str]],
) -> tuple[list[dict], list[str]]:
    """The calls and results of tool turn ``position``; gives its tool_use blocks their ids.

    ``seen_calls`` (call key -> where it was first made, its result) is shared by all turns, so
    two turns making the same call must agree on its result.
    """
    where = f"turns[{position}]"
    several = "results" in turn
    blocks = [b for b in content if b["type"] == "tool_use"]
    raw = turn["results"] if several else [turn["result"]]
    field = "results" if several else "result"
    if len(raw) != len(blocks):
        raise InvalidField(
            f"{where}.results",
            f"has {len(raw)} results for {len(blocks)} tool_use blocks; give one result "
            "per block, in the order of the blocks",
        )
    calls, results = [], []
    for j, (block, result) in enumerate(zip(blocks, raw, strict=True)):
        at = f"{where}.{field}" + (f"[{j}]" if several else "")
        block["id"] = tool_use_id(scenario, position + 1, j)
        calls.append(
            {"id": block["id"], "name": block["name"], "input": copy.deepcopy(block["input"])}
        )
        if isinstance(result, dict):
            seed = position + 1 if j == 0 else f"{position + 1}.{j}"
            result = generate_result(result, at, scenario, seed)
        elif not isinstance(result, str):
            kind = type(result).__name__
            raise InvalidField(at, f"must be a string or an object, got {kind}")
        results.append(result)
        key = block["name"] + "\x00" + canonical_json(block["input"])
        if key in seen_calls and seen_calls[key][1] != result:
            raise InvalidField(
                at,
                f"{seen_calls[key][0]} calls {block['name']} with the same input but a "
                "different result; the fake tools look results up by name and input, so "
                "they must agree",
            )
        seen_calls[key] = (where if not several else at, result)
    return calls, results


def _build_content(
    content: list, where: str, final: bool, tools: dict[str, dict], several: bool = False
) -> list[dict]:
    if not content:
        raise InvalidField(where, "must hold at least one content block")
    tool_uses = 0
    blocks = []
    for position, block in enumerate(content):
        at = f"{where}[{position}]"
        if not isinstance(block, dict) or block.get("type") not in ("text", "tool_use"):
            raise InvalidField(f"{at}.type", 'must be "text" or "tool_use"')
        if block["type"] == "text":
            check_keys(block, at, {"type": str, "text": str}, {})
            blocks.append({"type": "text", "text": block["text"]})
            continue
        check_keys(block, at, {"type": str, "name": str, "input": dict}, {})
        tool_uses += 1
        if block["name"] not in tools:
            raise InvalidField(
                f"{at}.name", f"{block['name']!r} is not declared in tools ({', '.join(tools)})"
            )
        problems = value_problems(block["input"], tools[block["name"]]["input_schema"], "input")
        if problems:
            raise InvalidField(
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
        raise InvalidField(
            where, "the last turn is the final answer: text blocks only, no tool_use"
        )
    if final and not blocks:
        raise InvalidField(where, "the final answer needs a text block")
    if not final and not several and tool_uses != 1:
        raise InvalidField(
            where,
            f"a tool turn has exactly one tool_use block (the course's rule), found {tool_uses}; "
            "a turn that asks for several tools at once gives 'results', one per block",
        )
    if not final and several and tool_uses < 2:
        raise InvalidField(
            where,
            f"a turn with 'results' asks for several tools at once: two or more tool_use "
            f"blocks, found {tool_uses} (one call takes 'result')",
        )
    return blocks

