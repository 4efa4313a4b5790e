"""``checkpoint-lab dev check``: the maintainer's check of every exercise, both directions.

For each exercise notebook (rustlings' ``dev check``): the committed release is what the build
makes; the reference passes every check; the starter, as released, fails every check; every
fixture gets the outcome its name says. One line per exercise, then the mismatches; exit status
1 on any.

Fixture names say their outcome: ``passes_*`` pass every check of their exercise;
``*fails_all*`` and ``cheat_*`` fail every one; ``fails_atomic_*`` fail the atomic-save checks,
``fails_save_point_a_*`` the save-point checks, ``level3_fails_file_*`` / ``level3_fails_
directory_*`` the Level 3 check of that name and pass the other; any other name fails at least
one check. ``tests/fixtures/adversarial/expected.json`` says exactly, check by check, where it
has an entry.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import re
from pathlib import Path

__all__ = ["add_arguments", "run", "expected_outcome", "fixtures_of"]

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("what", choices=["check"], help="check: every exercise, both directions")
    parser.add_argument("--exercise", metavar="NAME", action="append",
                        help="only this exercise notebook (repeatable), e.g. 03_power_cut")
    parser.add_argument("--jobs", "-j", type=int, default=2, help="submissions graded at once")


def fixtures_of(notebook: str) -> list[Path]:
    """The fixture submissions of ``notebook``, found by their names."""
    level = int(notebook[:2])
    subs = sorted((FIXTURES / "submissions").glob("*.py"))
    if level == 2:
        found = [p for p in subs if not re.match(r"level\d_", p.name)]
        found += sorted((FIXTURES / "adversarial").glob("*.py"))
        return found
    if level == 1:
        return []  # Level 1's fixtures are a cell each, graded by tests/test_checks.py
    return [p for p in subs if p.name.startswith(f"level{level}_")]


def _adversarial() -> dict:
    path = FIXTURES / "adversarial" / "expected.json"
    return json.loads(path.read_text()) if path.exists() else {}


def expected_outcome(path: Path, check_ids: list[str]) -> dict[str, bool] | str:
    """check id -> must pass, or ``"some_fail"`` when the name only says something fails."""
    table = _adversarial()
    if path.parent.name == "adversarial" and path.stem in table:
        return {c: bool(table[path.stem].get(c)) for c in check_ids if c in table[path.stem]}
    name = path.stem.removeprefix("level3_").removeprefix("level4_")
    if name.startswith("passes_"):
        return dict.fromkeys(check_ids, True)
    if "fails_all" in name or name.startswith("cheat_"):
        return dict.fromkeys(check_ids, False)
    for prefix, part in (("fails_atomic_", "atomic_save"), ("fails_save_point_a_", "save_point_a"),
                         ("fails_file_", "file_synced"), ("fails_directory_", "directory_synced")):
        if name.startswith(prefix):
            return {c: part not in c for c in check_ids}
    return "some_fail"


def _source(path: Path, notebook: str) -> str:
    text = path.read_text(encoding="utf-8")
    if notebook.startswith("03"):
        return f"# --- answer cell l3_save_checkpoint ---\n{text}"
    return text


def _release_and_reference(notebook: str):
    """(starter source, reference source) of ``notebook``, from the release and the build."""
    import nbformat

    from graders.checks import submission_from_notebook
    from graders.nbgrader_plumbing.source_notebook import SOURCES_DIR, build_source_notebook

    release = ROOT / "exercises" / f"{notebook}.ipynb"
    starter = submission_from_notebook(nbformat.read(release, as_version=4), notebook)
    nb = build_source_notebook(SOURCES_DIR / f"{notebook}.py")
    for cell in nb.cells:
        cell.source = "\n".join(line for line in cell.source.splitlines()
                                if "BEGIN SOLUTION" not in line and "END SOLUTION" not in line)
    reference = submission_from_notebook(nb, notebook)
    return starter, reference


def _check_exercise(notebook: str, jobs: int, stale: list[str]) -> tuple[str, list[str]]:
    from graders.checks import checks_for, grade_submission

    problems = [f"release: {line}" for line in stale if line.startswith(notebook)]
    ids = [c.id for c in checks_for(notebook)]
    starter, reference = _release_and_reference(notebook)
    graded = {"reference": grade_submission(reference, notebook),
              "starter": grade_submission(starter, notebook)}
    failing = [c for c, r in graded["reference"].items() if not r.passed]
    problems += [f"reference fails {c}: {graded['reference'][c].message[:300]}" for c in failing]
    problems += [f"starter passes {c}" for c, r in graded["starter"].items() if r.passed]
    fixtures = fixtures_of(notebook)

    def grade(path: Path):
        return path, grade_submission(_source(path, notebook), notebook)

    mismatched = 0
    with concurrent.futures.ThreadPoolExecutor(max(1, jobs)) as pool:
        for path, results in pool.map(grade, fixtures):
            want = expected_outcome(path, ids)
            if want == "some_fail":
                if all(r.passed for r in results.values()):
                    problems.append(f"{path.name}: passes every check, but its name says "
                                    "something fails")
                    mismatched += 1
                continue
            wrong = [c for c, must in want.items() if results[c].passed != must]
            if wrong:
                mismatched += 1
                problems.append(f"{path.name}: " + "; ".join(
                    f"{c} {'passed' if results[c].passed else 'failed'}, its name says "
                    f"{'pass' if want[c] else 'fail'}" for c in wrong))
    ref = sum(r.passed for r in graded["reference"].values())
    start = sum(r.passed for r in graded["starter"].values())
    status = "ok" if not problems else "FAIL"
    line = (f"{notebook}: {status} (release {'in sync' if not stale else 'checked'}; reference "
            f"{ref}/{len(ids)} checks; starter {start}/{len(ids)}; "
            f"{len(fixtures) - mismatched}/{len(fixtures)} fixtures as named)")
    return line, problems


def run(args: argparse.Namespace) -> int:
    """Check every exercise; exit 1 on any mismatch."""
    from graders.checks import NOTEBOOKS
    from graders.cli import UsageError
    from graders.nbgrader_plumbing.build import stale_exercises
    from graders.sandbox.engine import grading_problem

    problem = grading_problem()
    if problem:
        raise UsageError(f"dev check grades through the sandbox: {problem}")
    wanted = args.exercise or list(NOTEBOOKS)
    unknown = [n for n in wanted if n not in NOTEBOOKS]
    if unknown:
        raise UsageError(f"no exercise {unknown[0]!r}; the exercises are {', '.join(NOTEBOOKS)}")
    stale = stale_exercises()
    failed = False
    for notebook in wanted:
        line, problems = _check_exercise(notebook, args.jobs, stale)
        print(line, flush=True)
        for item in problems:
            print(f"  - {item}")
        failed = failed or bool(problems)
    return 1 if failed else 0
