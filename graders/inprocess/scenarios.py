"""The fake model's scenario a crash run plays, by name: shared by the forking harness and the
in-process backend, and importing neither, so that the site's Pyodide (no ``fork``, no
``resource.setrlimit``) loads it with the harness."""

from __future__ import annotations

from graders.inprocess.support import HarnessError

__all__ = ["scenario_of"]


def scenario_of(scenario):
    """The fake_llm Scenario named ``scenario`` (a Scenario is returned as is); an unknown name
    is a :class:`HarnessError` naming the scenarios there are."""
    import fake_llm

    if isinstance(scenario, str):
        try:
            return fake_llm.load_scenario(scenario)
        except fake_llm.FakeLLMError as err:
            raise HarnessError(str(err)) from None
    return scenario
