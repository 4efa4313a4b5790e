"""``checkpoint-lab dev check``: the maintainer's check of every exercise, both directions.

For each exercise of the registry (`graders.checks.EXERCISES`; rustlings' ``dev check``): the
committed release is what the build makes; the reference passes every check; the starter, as
released, fails every check; and every fixture of ``tests/fixtures/<exercise>/`` and of its
``adversarial/`` catalog gets, check by check, what its folder's ``expected.json`` says (the one
truth table of the fixtures). A fixture's name must agree with its row (:func:`name_problem`):
``passes_*`` passes every check; ``starter``, ``cheat_*`` and ``fails_all_*`` fail every one;
``fails_<check>_*`` fails the check it names (and what else its row says). One line per
exercise, then the mismatches; exit status 1 on any. ``--root`` checks another course checkout
laid out as this one (``exercises/``, ``solutions/``, ``tests/fixtures/``). ``--records FILE``
writes every result it graded there as JSON (:func:`write_records`): the test suite grades each
fixture once per run and asserts on those records.

A fixture file is the answer cell its exercise's record names (``Exercise.fixture_cell``), or a
whole submission (`graders.checks.answer_cells.fixture_cells`); its row lists the checks it is
judged on. A catalog file may carry ``# notebook: ...`` lines: how the one-batch harm test hands
it in (``tests/test_adversarial_batch.py``); here only its code is graded.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
from pathlib import Path

__all__ = ["add_arguments", "run", "fixtures_of", "truth_of", "name_problem", "unexpected_files",
           "write_records", "records_json", "ROOT"]

#: The checkout this package runs from.
ROOT = Path(__file__).resolve().parents[2]
TRUTH = "expected.json"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("what", choices=["check", "golden", "bench"],
                        help="check: every exercise, both directions; golden: every fixture's "
                             "records and results.json against tests/golden/ (--update: "
                             "rewrite them); bench: every benchmark, each ratio beside its goal")
    parser.add_argument("--quick", action="store_true",
                        help="bench: fewer rounds and submissions, a first look")
    parser.add_argument("--exercise", metavar="NAME", action="append",
                        help="only this exercise notebook (repeatable), e.g. 03_power_cut")
    parser.add_argument("--jobs", "-j", type=int, default=2, help="submissions graded at once")
    parser.add_argument("--root", metavar="DIR", type=Path, default=ROOT,
                        help="the course checkout to check (default: this one)")
    parser.add_argument("--records", metavar="FILE", type=Path,
                        help="check: also write every result graded, as JSON, to FILE")
    parser.add_argument("--update", action="store_true",
                        help="golden: rewrite the golden files from this grading")
    parser.add_argument("--from-records", metavar="FILE", type=Path,
                        help="golden: take the results from FILE (what check --records wrote) "
                             "instead of grading again")


def fixtures_of(notebook: str, root: Path = ROOT) -> list[Path]:
    """The fixture submissions of ``notebook``: its folder, named as the exercise, and its
    adversarial catalog."""
    folder = root / "tests" / "fixtures" / notebook
    return sorted(folder.glob("*.py")) + sorted((folder / "adversarial").glob("*.py"))


def truth_of(folder: Path) -> dict[str, dict[str, bool]]:
    """``folder``'s ``expected.json``: fixture name -> check id -> whether it must pass."""
    path = folder / TRUTH
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


#: Where each exercise's files live, as (folder, names an exercise may have there, files every
#: course has there); ``{}`` stands for the exercise's notebook name.
EXERCISE_FILES = (
    ("exercises", ("{}.ipynb",), ("README.md",)),
    ("exercises/src", ("{}.py",), ()),
    ("solutions", ("{}.py", "{}.written_answers.md", "{}.walkthrough.md"), ("README.md",)),
    ("graders/data/hints", ("{}.md",), ()),
    ("tests/fixtures", ("{}",), ("catalog.py", "rewrites.py", "notebooks", "__pycache__")),
)


def unexpected_files(root: Path, notebooks) -> list[str]:
    """The files in the exercises' folders under ``root`` that belong to no exercise of
    ``notebooks`` (rustlings' unexpected-files check): a stale copy, a misnamed solution, a
    fixture folder for an exercise that is not registered."""
    found = []
    for folder, patterns, shared in EXERCISE_FILES:
        named = {p.format(n) for p in patterns for n in notebooks} | set(shared)
        where = root / folder
        if where.is_dir():
            found += [f"{folder}/{path.name}" for path in sorted(where.iterdir())
                      if path.name not in named
                      and (path.is_file() or folder == "tests/fixtures")]
    return found


def _fixture_word(check_id: str) -> str:
    """A check's name in a fixture's name: its id without the level and ``_hidden``."""
    return check_id.split("_", 1)[-1].removesuffix("_hidden")


def name_problem(name: str, row: dict[str, bool]) -> str | None:
    """What is wrong with fixture name ``name`` for its row of expected.json, or None.

    ``passes_<what>`` passes every check; ``starter``, ``cheat_<what>`` and ``fails_all_<what>``
    fail every one; ``fails_<check>_<what>`` fails the checks ``<check>`` names (a check's id
    without its level and ``_hidden``, or that name's first word: ``fails_atomic_*``), and any
    ``fails_*`` fails at least one. No other name says its outcome.
    """
    failing = sorted(c for c, passes in row.items() if not passes)
    if not row:
        return "its row names no check"
    if name.startswith("passes_"):
        return f"named passes_, but its row fails {', '.join(failing)}" if failing else None
    if name == "starter" or name.startswith(("cheat_", "fails_all_")):
        passing = sorted(set(row) - set(failing))
        return f"named to fail every check, but its row passes {', '.join(passing)}" \
            if passing else None
    if name.startswith("fails_"):
        rest = name.removeprefix("fails_")
        named = {c for c in row if (word := _fixture_word(c)) == rest
                 or rest.startswith(f"{word}_") or rest.split("_")[0] == word.split("_")[0]}
        passing = sorted(named - set(failing))
        if passing:
            return f"named for {', '.join(passing)}, but its row passes it"
        return None if failing else "named fails_, but its row passes every check"
    return ("its name does not say its outcome (passes_<what>, fails_<check>_<what>, "
            "fails_all_<what>, cheat_<what> or starter)")


def _table_problems(notebook: str, root: Path, ids: list[str]) -> list[str]:
    """What is wrong with the truth tables of ``notebook``'s fixture folders themselves."""
    problems = []
    folder = root / "tests" / "fixtures" / notebook
    for where in (folder, folder / "adversarial"):
        files = {p.stem for p in where.glob("*.py")}
        truth = truth_of(where)
        shown = where.relative_to(folder.parent)
        problems += [f"{shown}/{TRUTH}: {name} has no fixture file"
                     for name in sorted(set(truth) - files)]
        for name, row in sorted(truth.items()):
            unknown = sorted(set(row) - set(ids))
            if unknown:
                problems.append(f"{shown}/{TRUTH}: {name} names no check of {notebook}: "
                                f"{', '.join(unknown)}")
            problem = name_problem(name, row) if name in files else None
            if problem:
                problems.append(f"{shown}/{name}.py: {problem}")
    return problems


def _grade_fixtures(notebook: str, root: Path, jobs: int,
                    kept: dict) -> tuple[int, list[str]]:
    """(how many fixtures were graded as their row says, what differs); each fixture's results
    go in ``kept`` under its path relative to ``root``."""
    from graders.checks import grade_submission
    from graders.checks.answer_cells import fixture_cells

    fixtures = fixtures_of(notebook, root)

    def grade(path: Path):
        cells = fixture_cells(path.read_text(encoding="utf-8"), notebook)
        return path, grade_submission(cells, notebook)

    good, problems = 0, []
    with concurrent.futures.ThreadPoolExecutor(max(1, jobs)) as pool:
        for path, results in pool.map(grade, fixtures):
            kept[path.relative_to(root).as_posix()] = results
            want = truth_of(path.parent).get(path.stem)
            if not want:
                problems.append(f"{path.name}: not in {path.parent.name}/{TRUTH}, which must say "
                                "what each check gives it")
                continue
            wrong = [c for c, must in want.items() if c in results and results[c].passed != must]
            if wrong:
                problems.append(f"{path.name}: " + "; ".join(
                    f"{c} {'passed' if results[c].passed else 'failed'}, {TRUTH} says "
                    f"{'pass' if want[c] else 'fail'} ({results[c].message[:300]})"
                    for c in wrong))
            else:
                good += 1
    return good, problems


def _check_exercise(notebook: str, root: Path, jobs: int, stale: list[str],
                    kept: dict) -> tuple[str, list[str]]:
    from graders.checks import checks_for, grade_submission
    from graders.nbgrader_plumbing.build import release_and_reference

    problems = [f"release: {line}" for line in stale if line.startswith(notebook)]
    ids = [c.id for c in checks_for(notebook)]
    starter, reference = release_and_reference(notebook, root)
    graded = {"reference": grade_submission(reference, notebook),
              "starter": grade_submission(starter, notebook)}
    failing = [c for c, r in graded["reference"].items() if not r.passed]
    problems += [f"reference fails {c}: {graded['reference'][c].message[:300]}" for c in failing]
    problems += [f"starter passes {c}" for c, r in graded["starter"].items() if r.passed]
    problems += _table_problems(notebook, root, ids)
    kept.update(graded)
    good, mismatches = _grade_fixtures(notebook, root, jobs, kept.setdefault("fixtures", {}))
    problems += mismatches
    ref = sum(r.passed for r in graded["reference"].values())
    start = sum(r.passed for r in graded["starter"].values())
    status = "ok" if not problems else "FAIL"
    line = (f"{notebook}: {status} (release {'in sync' if not stale else 'checked'}; reference "
            f"{ref}/{len(ids)} checks; starter {start}/{len(ids)}; "
            f"{good}/{len(fixtures_of(notebook, root))} fixtures as named)")
    return line, problems


def run(args: argparse.Namespace) -> int:
    """Check every exercise (exit 1 on any mismatch), or run every benchmark."""
    if args.what == "bench":
        return _bench(Path(args.root).resolve(), args.quick)
    from graders.checks import EXERCISES
    from graders.cli import UsageError
    from graders.grading.observers import grading_problem
    from graders.nbgrader_plumbing.build import stale_exercises

    if args.what == "golden" and args.from_records:
        from graders.cli import golden

        graded = json.loads(Path(args.from_records).read_text(encoding="utf-8"))
        return golden.run(args, graded["exercises"])
    problem = grading_problem()
    if problem:
        raise UsageError(f"dev {args.what} grades through the sandbox: {problem}")
    root = Path(args.root).resolve()
    wanted = args.exercise or [n for n in EXERCISES if (root / "exercises" / "src" /
                                                        f"{n}.py").exists()]
    unknown = [n for n in wanted if n not in EXERCISES]
    if unknown:
        raise UsageError(f"no exercise {unknown[0]!r}; the exercises are {', '.join(EXERCISES)}")
    stale = stale_exercises(root / "exercises", root / "exercises" / "src", root)
    strays = unexpected_files(root, list(EXERCISES))
    if strays:
        print(f"files that no exercise record names ({len(strays)}; rename them as the exercise's "
              "notebook, register the exercise in EXERCISE_MODULES, or remove them):")
        for path in strays:
            print(f"  - {path}")
    failed = bool(strays)
    kept: dict[str, dict] = {}
    for notebook in wanted:
        line, problems = _check_exercise(notebook, root, args.jobs, stale,
                                         kept.setdefault(notebook, {}))
        print(line, flush=True)
        for item in problems:
            print(f"  - {item}")
        failed = failed or bool(problems)
    if args.records:
        write_records(args.records, kept)
    if args.what == "golden":
        from graders.cli import golden

        return golden.run(args, records_json(kept)["exercises"])
    return 1 if failed else 0


def write_records(path: Path, kept: dict[str, dict]) -> None:
    """Write what ``dev check`` graded to ``path`` as JSON: the sandbox's tier (its
    ``describe()`` line), and per
    exercise ``reference`` and ``starter`` (as released) and ``fixtures`` (each fixture's path
    relative to the checkout): check id -> `CheckResult.to_dict`."""
    path.write_text(json.dumps(records_json(kept)), encoding="utf-8")


def records_json(kept: dict[str, dict]) -> dict:
    """What :func:`write_records` writes, as plain JSON data."""
    from graders.sandbox import box

    chosen = box.tier()

    def plain(results: dict) -> dict:
        return {check: result.to_dict() for check, result in results.items()}

    exercises = {notebook: {"reference": plain(graded["reference"]),
                            "starter": plain(graded["starter"]),
                            "fixtures": {name: plain(results)
                                         for name, results in graded["fixtures"].items()}}
                 for notebook, graded in kept.items()}
    tier = chosen if isinstance(chosen, str) else chosen.describe()
    return {"tier": tier, "exercises": exercises}


def _bench(root: Path, quick: bool) -> int:
    """``python -m benchmarks`` of the checkout (its benchmarks are not part of the package)."""
    import subprocess
    import sys

    from graders.cli import UsageError

    if not (root / "benchmarks" / "__main__.py").exists():
        raise UsageError(f"dev bench runs a checkout's benchmarks, and {root} has no "
                         "benchmarks/__main__.py: pass --root with a course checkout")
    return subprocess.run([sys.executable, "-m", "benchmarks", *(["--quick"] if quick else [])],
                          cwd=root).returncode
