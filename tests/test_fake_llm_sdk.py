"""fake_llm is faithful: what it produces validates against the official anthropic SDK's types."""

from __future__ import annotations

import importlib
import json

import pytest

anthropic = pytest.importorskip("anthropic")
from anthropic.types import Message, MessageParam, ToolParam  # noqa: E402
from pydantic import TypeAdapter  # noqa: E402

from fake_llm import list_scenarios, load_scenario  # noqa: E402

TOOL = TypeAdapter(ToolParam)
MESSAGE_PARAM = TypeAdapter(MessageParam)


def without_none(value):
    if isinstance(value, dict):
        return {k: without_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [without_none(v) for v in value]
    return value


@pytest.mark.parametrize("name", list_scenarios())
def test_every_response_is_a_valid_sdk_message(name):
    sc = load_scenario(name)
    call_model = sc.model()
    conversation = sc.conversation()
    for turn, expected in enumerate(sc.responses()):
        response = call_model(tools=sc.tools, messages=conversation[: 2 * turn + 1])
        assert response == expected
        message = Message.model_validate(response)
        # Nothing the fake sends is dropped or renamed by the SDK's model.
        assert without_none(message.model_dump()) == without_none(response)
        assert message.stop_reason in ("tool_use", "end_turn")
        assert message.usage.output_tokens > 0


@pytest.mark.parametrize("name", list_scenarios())
def test_every_tool_definition_is_a_valid_tool_param(name):
    for tool in load_scenario(name).tools:
        validated = TOOL.validate_python(tool)
        assert validated["name"] == tool["name"]
        assert validated["input_schema"]["type"] == "object"
        assert set(tool) == {"name", "description", "input_schema"}


@pytest.mark.parametrize("name", list_scenarios())
def test_every_message_of_the_conversation_is_a_valid_message_param(name):
    conversation = load_scenario(name).conversation()
    for message in conversation + json.loads(json.dumps(conversation)):
        validated = MESSAGE_PARAM.validate_python(message)
        assert validated["role"] == message["role"]


def test_the_real_adapter_imports_without_a_key_and_refuses_clearly(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    real = importlib.import_module("fake_llm.real")
    with pytest.raises(real.RealModelError) as caught:
        real.real_model()
    message = str(caught.value)
    assert "ANTHROPIC_API_KEY" in message and "fake model" in message


def test_the_real_adapter_builds_a_call_model_without_calling_out(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-a-real-key")
    real = importlib.import_module("fake_llm.real")
    call_model = real.real_model("claude-sonnet-4-5")
    assert callable(call_model)


def test_the_real_adapter_returns_the_fake_models_shape(monkeypatch):
    """Through a mock HTTP transport (no network): the adapter's dict is what the loop expects."""
    httpx2 = pytest.importorskip("httpx2")  # the HTTP client the anthropic SDK 2.x uses
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    sc = load_scenario("support-tickets")
    scripted = sc.responses()[0]
    sent = []

    def answer(request):
        sent.append(json.loads(request.content))
        return httpx2.Response(200, json=scripted)

    client = anthropic.Anthropic(
        api_key="sk-ant-test", http_client=httpx2.Client(transport=httpx2.MockTransport(answer))
    )
    real = importlib.import_module("fake_llm.real")
    call_model = real.real_model("claude-test", client=client)
    response = call_model(tools=sc.tools, messages=sc.conversation()[:1])
    assert sent[0]["model"] == "claude-test" and sent[0]["tools"] == sc.tools
    assert sent[0]["messages"] == sc.conversation()[:1] and sent[0]["max_tokens"] == 1024
    assert response["content"] == scripted["content"]
    assert response["stop_reason"] == "tool_use" and response["stop_sequence"] is None
    assert response["usage"]["output_tokens"] == scripted["usage"]["output_tokens"]
    json.dumps(response)
