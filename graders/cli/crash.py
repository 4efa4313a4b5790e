"""``checkpoint-lab crash FILE``: run the crash matrix on a Python file and print the verdicts.

Exit status 0 only if every verdict passed (1 otherwise, 2 for bad input).
"""

from __future__ import annotations

import argparse
import json
import shutil
import textwrap
from pathlib import Path

from graders.cli import UsageError

__all__ = ["add_arguments", "run"]

_DEFAULT_SCENARIO = "support-tickets"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``crash`` subcommand's arguments."""
    parser.add_argument("file", metavar="FILE",
                        help="a .py file that defines save_checkpoint and run_agent")
    parser.add_argument("--scenario", metavar="NAME", action="append",
                        help=f"scenario to run (default: {_DEFAULT_SCENARIO}); repeat it for "
                        "several, or say 'all'")
    parser.add_argument("--point", metavar="ID", action="append",
                        help="run only this crash point (e.g. killed_during_tool_2); repeatable")
    parser.add_argument("--json", action="store_true", help="print the verdicts as JSON")
    parser.add_argument("--timeout", metavar="SECONDS", type=float, default=None,
                        help="seconds a run may take before it counts as a hang (default: 5)")


def _scenarios(names: list[str] | None) -> list[str]:
    from fake_llm import list_scenarios

    known = list_scenarios()
    names = names or [_DEFAULT_SCENARIO]
    if "all" in names:
        return known
    unknown = [n for n in names if n not in known]
    if unknown:
        raise UsageError(f"unknown scenario {unknown[0]!r}; the scenarios are: "
                         f"{', '.join(known)} (or 'all')")
    return list(dict.fromkeys(names))


def _verdicts(harness, scenario: str, point_ids: list[str] | None):
    from graders.inprocess.harness import HarnessError
    from graders.judge.checkpoint_rules import check

    if not point_ids:
        return harness.run_matrix(scenario)
    problem = harness.load_problem()
    if problem:
        return harness.run_matrix(scenario)  # the one "load" verdict
    verdicts = []
    for point_id in point_ids:
        try:
            point = harness.point(scenario, point_id)
        except HarnessError as err:
            raise UsageError(str(err)) from None
        verdicts.append(check(harness.run_point(scenario, point), harness.scenario(scenario),
                              point))
    return verdicts


def _table(verdicts) -> str:
    """The verdicts as a table for a terminal (every message made printable: it may quote the
    submission's own exception)."""
    from graders.text import printable

    width = max(60, min(shutil.get_terminal_size((100, 20)).columns, 120))
    id_width = max(len(v.point) for v in verdicts)
    lines = []
    for scenario in dict.fromkeys(v.scenario for v in verdicts):
        rows = [v for v in verdicts if v.scenario == scenario]
        passed = sum(v.passed for v in rows)
        lines.append(f"{scenario}: {passed} of {len(rows)} crash points passed")
        indent = " " * (2 + 7 + 1 + id_width + 2)
        for v in rows:
            mark = "skipped" if v.skipped else ("passed" if v.passed else "FAILED")
            head = f"  {mark:<7} {v.point:<{id_width}}  "
            lines.append(textwrap.fill(printable(v.message), width=width, initial_indent=head,
                                       subsequent_indent=indent))
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def run(args: argparse.Namespace) -> int:
    """Run the crash matrix on ``args.file``; print the verdicts; 0 if all passed."""
    from graders.inprocess.harness import DEFAULT_TIMEOUT, Harness
    from graders.submission import Submission

    path = Path(args.file)
    if not path.is_file():
        raise UsageError(f"no such file: {args.file}")
    try:
        submission = Submission.from_file(path)
    except (OSError, UnicodeDecodeError) as err:
        raise UsageError(f"cannot read {args.file}: {err}") from None
    if submission.missing():
        raise UsageError(f"{args.file} does not define save_checkpoint and run_agent: "
                         f"{submission.problem()}")
    scenarios = _scenarios(args.scenario)
    timeout = DEFAULT_TIMEOUT if args.timeout is None else args.timeout
    if timeout <= 0:
        raise UsageError("--timeout must be a positive number of seconds")
    verdicts = []
    with Harness(submission, timeout=timeout) as harness:
        for scenario in scenarios:
            verdicts += _verdicts(harness, scenario, args.point)
    if args.json:
        print(json.dumps([v.to_dict() for v in verdicts], indent=2))
    else:
        print(_table(verdicts), end="")
    return 0 if verdicts and all(v.passed for v in verdicts) else 1
