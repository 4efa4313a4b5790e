"""``checkpoint-lab dev check``: the maintainer's check of every exercise, both directions.

For each exercise notebook (rustlings' ``dev check``): the committed release is what the build
makes; the reference passes every check; the starter, as released, fails every check; every
fixture gets the outcome its name says. One line per exercise, then the mismatches; exit status
1 on any.

An exercise's fixtures are ``tests/fixtures/<exercise>/*.py`` and its adversarial catalog in
``tests/fixtures/<exercise>/adversarial/*.py``; Level 1's are ``save_checkpoint`` cells, judged
by the check that runs that cell. Their names say their outcome: ``passes_*`` pass every check;
``starter``, ``*fails_all*`` and ``cheat_*`` fail every one; ``fails_atomic_*`` /
``fails_save_point_a_*`` (Level 2), ``fails_file_*`` / ``fails_directory_*`` (Level 3) and
``fails_no_call_lost_*`` / ``fails_results_kept_*`` / ``fails_one_result_message_*`` (Level 4)
fail the checks of that name and pass the others; any other name fails at least one check. Each
catalog's ``adversarial/expected.json`` says exactly, check by check, what a correct judge says.
A catalog file may carry ``# notebook: ...`` lines: how the one-batch harm test hands it in
(``tests/test_adversarial_batch.py``); here only its code is graded.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
from pathlib import Path

__all__ = ["add_arguments", "run", "expected_outcome", "fixtures_of", "judged_checks",
           "NAMED_PARTS"]

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
#: ``fails_<part>_*``: fails the checks whose id holds ``part`` and passes the others.
NAMED_PARTS = (("fails_atomic_", "atomic_save"), ("fails_save_point_a_", "save_point_a"),
               ("fails_file_", "file_synced"), ("fails_directory_", "directory_synced"),
               ("fails_no_call_lost_", "no_call_lost"), ("fails_results_kept_", "results_kept"),
               ("fails_one_result_message_", "one_result_message"))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("what", choices=["check"], help="check: every exercise, both directions")
    parser.add_argument("--exercise", metavar="NAME", action="append",
                        help="only this exercise notebook (repeatable), e.g. 03_power_cut")
    parser.add_argument("--jobs", "-j", type=int, default=2, help="submissions graded at once")


def fixtures_of(notebook: str) -> list[Path]:
    """The fixture submissions of ``notebook``: its folder, named as the exercise."""
    folder = FIXTURES / notebook
    return sorted(folder.glob("*.py")) + sorted((folder / "adversarial").glob("*.py"))


def judged_checks(notebook: str, check_ids: list[str]) -> list[str]:
    """The checks a fixture of ``notebook`` is judged on (Level 1's fixtures are a save cell)."""
    if notebook.startswith("01"):
        return [c for c in check_ids if c == "l1_saves_all_six"]
    return list(check_ids)


def _adversarial(path: Path) -> dict:
    table = path.parent / "expected.json"
    return json.loads(table.read_text()) if table.exists() else {}


def expected_outcome(path: Path, check_ids: list[str]) -> dict[str, bool] | str:
    """check id -> must pass, or ``"some_fail"`` when the name only says something fails."""
    table = _adversarial(path) if path.parent.name == "adversarial" else {}
    if path.stem in table:
        return {c: bool(table[path.stem].get(c)) for c in check_ids if c in table[path.stem]}
    name = path.stem
    if name.startswith("passes_"):
        return dict.fromkeys(check_ids, True)
    if name == "starter" or "fails_all" in name or name.startswith("cheat_"):
        return dict.fromkeys(check_ids, False)
    for prefix, part in NAMED_PARTS:
        if name.startswith(prefix):
            return {c: part not in c for c in check_ids}
    return "some_fail"


def _source(path: Path, notebook: str) -> str:
    text = path.read_text(encoding="utf-8")
    cell = {"01": "l1_save_checkpoint", "03": "l3_save_checkpoint"}.get(notebook[:2])
    return f"# --- answer cell {cell} ---\n{text}" if cell else text


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

    judged = judged_checks(notebook, ids)
    mismatched = 0
    with concurrent.futures.ThreadPoolExecutor(max(1, jobs)) as pool:
        for path, results in pool.map(grade, fixtures):
            want = expected_outcome(path, judged)
            if want == "some_fail":
                if all(results[c].passed for c in judged):
                    problems.append(f"{path.name}: passes every check, but its name says "
                                    "something fails")
                    mismatched += 1
                continue
            wrong = [c for c, must in want.items() if results[c].passed != must]
            if wrong:
                mismatched += 1
                problems.append(f"{path.name}: " + "; ".join(
                    f"{c} {'passed' if results[c].passed else 'failed'}, its name says "
                    f"{'pass' if want[c] else 'fail'} ({results[c].message[:300]})"
                    for c in wrong))
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
