"""In-process mode: the notebook's own process forks the children (a self-check, no runner).

The submission's functions are already live here, so nothing is loaded; each scenario is loaded
and warmed up once, and every child is forked from this process into its own process group.
"""

from __future__ import annotations

import os
from typing import Any

from graders.inprocess import child as _child
from graders.inprocess.runner import warm_up
from graders.inprocess.scenarios import scenario_of
from graders.inprocess.waiting import run_children
from graders.submission import Submission

__all__ = ["ForkBackend"]


class ForkBackend:
    """In-process mode: this process forks the children itself (a notebook self-check)."""

    def __init__(self, submission: Submission) -> None:
        self.submission = submission
        run_agent = submission.run_agent
        self.namespace = getattr(run_agent, "__globals__", {})
        self.filenames = {getattr(getattr(f, "__code__", None), "co_filename", "")
                          for f in (run_agent, submission.save_checkpoint)}
        self.scenarios: dict[str, Any] = {}

    def load(self, timeout: float) -> dict:
        return {"ok": True}

    def run(self, scenario: str, plans: list[dict], timeout: float, jobs: int):
        if scenario not in self.scenarios:
            self.scenarios[scenario] = scenario_of(scenario)
            try:
                warm_up(self.scenarios[scenario])
            except Exception:  # noqa: BLE001 - only an optimisation
                pass
        kit = _child.Kit(self.scenarios[scenario])
        functions = (self.submission.run_agent, self.submission.save_checkpoint)

        def start(plan):
            for key in ("base", "cwd", "hdir"):
                os.mkdir(plan[key])
            return _child.fork_child(self.namespace, kit, plan, plan["cwd"], plan["hdir"],
                                     filenames=self.filenames, functions=functions,
                                     own_group=True)

        for plan, status in run_children(start, plans, timeout, jobs):
            yield plan["id"], status

    def close(self) -> None:
        pass
