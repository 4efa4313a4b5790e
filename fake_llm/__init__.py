"""fake_llm: a deterministic, strict fake of the Anthropic Messages API, driven by scenarios.

    from fake_llm import load_scenario

    sc = load_scenario("support-tickets")
    call_model = sc.model()        # call_model(tools=..., messages=...) -> response dict
    execute_tool = sc.executor()   # execute_tool(name, input) -> str, with .ledger

See ``fake_llm/README.md`` for the rules it enforces and the scenario file format.
"""

from .errors import ConversationError, FakeLLMError, ScenarioError, ToolError
from .model import FakeModel
from .normalize import normalize_conversation, same_message
from .rules import RULES, validate_conversation
from .scenario import Scenario, list_scenarios, load_scenario
from .tools import FakeTools, LedgerEntry

__all__ = [
    "load_scenario",
    "list_scenarios",
    "Scenario",
    "FakeModel",
    "FakeTools",
    "LedgerEntry",
    "validate_conversation",
    "normalize_conversation",
    "same_message",
    "RULES",
    "FakeLLMError",
    "ScenarioError",
    "ConversationError",
    "ToolError",
]
