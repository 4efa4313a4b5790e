"""Optional: the same ``call_model`` contract, answered by a real Claude model.

Never the default and never used by the tests or the grader. Needs the ``anthropic`` package
(``pip install 'checkpoint-lab[real]'``) and an API key in ``ANTHROPIC_API_KEY`` (or passed in).
A real model does not follow a script: use it to watch your loop run, not to grade it.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from .errors import FakeLLMError

__all__ = ["real_model", "RealModelError", "DEFAULT_REAL_MODEL"]

DEFAULT_REAL_MODEL = "claude-sonnet-4-5"


class RealModelError(FakeLLMError):
    """The real model cannot be used here: no API key, or the ``anthropic`` package is missing."""


def real_model(
    model: str = DEFAULT_REAL_MODEL,
    api_key: str | None = None,
    *,
    max_tokens: int = 1024,
    client: object | None = None,
) -> Callable[..., dict]:
    """A ``call_model(*, tools, messages, **kwargs) -> dict`` that calls Claude through the SDK.

    The dict has the shape the fake model's responses have (``id``, ``type``, ``role``,
    ``model``, ``content``, ``stop_reason``, ``stop_sequence``, ``usage``), with ``None`` fields
    dropped from the content blocks so they can go straight back into ``messages``.

    ``client`` is an ``anthropic.Anthropic`` to use instead of a new one (then no key is read).
    Raises `RealModelError` when there is no API key or the ``anthropic`` package is missing.
    """
    if client is None:
        client = _client(api_key or os.environ.get("ANTHROPIC_API_KEY"))

    def call_model(*, tools: list, messages: list, **kwargs: object) -> dict:
        kwargs.setdefault("max_tokens", max_tokens)
        message = client.messages.create(model=model, tools=tools, messages=messages, **kwargs)
        response = message.model_dump(mode="json")
        response["content"] = [
            {key: value for key, value in block.items() if value is not None}
            for block in response["content"]
        ]
        return response

    return call_model


def _client(key: str | None):
    if not key:
        raise RealModelError(
            "no API key: set ANTHROPIC_API_KEY (or pass api_key=...) to use a real model, "
            "or use the fake model instead: fake_llm.load_scenario(name).model()."
        )
    try:
        import anthropic
    except ImportError:
        raise RealModelError(
            "the anthropic package is not installed: pip install 'checkpoint-lab[real]', "
            "or use the fake model instead: fake_llm.load_scenario(name).model()."
        ) from None
    return anthropic.Anthropic(api_key=key)
