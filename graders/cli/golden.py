"""``checkpoint-lab dev golden``: every fixture's typed result, kept byte for byte.

For each exercise, ``tests/golden/`` keeps one JSON file per submission that ``dev check``
grades: the reference (``reference.json``), the starter as released (``release_starter.json``)
and every fixture and catalog entry, named as the fixture (``tests/fixtures/<nb>/adversarial/
cheat_x.py`` -> ``tests/golden/<nb>/adversarial/cheat_x.json``). A file holds its check records
(`CheckRecord.to_json`, in the exercise's order) and the ``results.json`` Gradescope gets for a
notebook holding those answer cells (`graders.gradescope.results.results_of`; the written
answers empty, no ``execution_time``). A grader change that changes what a student reads
changes a golden file: :func:`compare` names the file and the field.

Nothing in a file depends on the machine: its messages are those of a grading in the
bubblewrap tier, where the run's folder is ``/work``; the checkout's own path and the random part
of a name ``tempfile`` made (:func:`stable`) are written as placeholders. A fixture whose tools
run in threads at once (:data:`SCHEDULED`) is judged on the interleaving the OS chose that run:
its file keeps what must not change with it (each check's status, score, points and cause;
each test's score and status), not the messages, which count its crash points.

``dev golden`` grades as ``dev check`` does (or takes ``--from-records FILE``, what
``dev check --records`` wrote), compares, and exits 1 on a difference; ``--update`` rewrites the
files instead. The test suite compares its one ``dev check``'s records (``tests/test_golden.py``).
"""

from __future__ import annotations

import difflib
import json
import re
from pathlib import Path
from typing import Any

__all__ = ["GOLDEN", "UPDATE_COMMAND", "SCHEDULED", "golden_path", "golden_of", "stable", "render",
           "differences", "compare", "update", "run"]

#: Where the golden files live, relative to the checkout.
GOLDEN = "tests/golden"
#: What rewrites them (say it where a difference is found).
UPDATE_COMMAND = "checkpoint-lab dev golden --update"
#: The two submissions of an exercise that are not fixture files: golden file stem by key.
RELEASED = {"reference": "reference", "starter": "release_starter"}
#: Fixtures whose tools run in threads at once: their crash points (and so the counts and the
#: first failing one in a message) follow the threads' interleaving, seen to differ between two
#: gradings of one commit (28 and 29 crash points).
SCHEDULED = tuple(f"tests/fixtures/04_parallel_tool_calls/adversarial/{name}.py" for name in (
    "fails_no_call_lost_threads_without_save_point_a", "fails_results_kept_threads_save_only_at_b",
    "passes_thread_pool_as_completed", "passes_tools_in_threads_with_lock"))
#: What a golden file of a SCHEDULED fixture keeps of each record, and of each Gradescope test.
_SCHEDULED_RECORD = ("check_id", "notebook", "title", "hidden", "points", "score", "status",
                     "cause")
_SCHEDULED_TEST = ("name", "number", "score", "max_score", "status", "visibility", "tags")

# A name tempfile made (mkstemp, NamedTemporaryFile, mkdtemp): its prefix, then 8 random
# characters of [a-z0-9_], then its suffix; a fixture's own fixed names never have them.
_TEMP_NAME = re.compile(r"(?<![A-Za-z0-9_])(tmp|\.?checkpoint\.json\.|\.?ckpt-?|\.?save-?|\.)"
                        r"[a-z0-9_]{8}(?![a-z0-9_])")


def golden_path(root: Path, notebook: str, which: str) -> Path:
    """The golden file of ``which`` (``"reference"``, ``"starter"`` or a fixture's path
    relative to the checkout) of ``notebook``."""
    if which in RELEASED:
        return root / GOLDEN / notebook / f"{RELEASED[which]}.json"
    rel = Path(which).relative_to(Path("tests") / "fixtures")
    return (root / GOLDEN / rel).with_suffix(".json")


def stable(text: str, root: Path) -> str:
    """``text`` with what differs between machines and runs written as placeholders: the
    checkout's path (``<checkout>``), a name's random part from ``tempfile`` (``XXXXXXXX``)."""
    text = text.replace(str(root), "<checkout>")
    return _TEMP_NAME.sub(lambda m: m.group(1) + "XXXXXXXX", text)


def _stable_data(data: Any, root: Path) -> Any:
    if isinstance(data, str):
        return stable(data, root)
    if isinstance(data, list):
        return [_stable_data(item, root) for item in data]
    if isinstance(data, dict):
        return {key: _stable_data(value, root) for key, value in data.items()}
    return data


def _cells(notebook: str, which: str, root: Path):
    from graders.checks.answer_cells import fixture_cells
    from graders.nbgrader_plumbing.build import release_and_reference

    if which in RELEASED:
        starter, reference = release_and_reference(notebook, root)
        return reference if which == "reference" else starter
    return fixture_cells((root / which).read_text(encoding="utf-8"), notebook)


def golden_of(notebook: str, which: str, results: dict[str, Any], root: Path) -> dict[str, Any]:
    """The golden file's content for ``which`` of ``notebook``, from its ``results`` (check id
    -> `CheckResult` or its ``to_dict``), as :func:`stable` writes it."""
    import nbformat

    from graders.checks.result import CheckResult
    from graders.gradescope.results import course_manifest, graded_records, results_of
    from graders.gradescope.submission_files import Found

    results = {c: r if isinstance(r, CheckResult) else CheckResult.from_dict(r)
               for c, r in results.items()}
    cells = _cells(notebook, which, root)
    shown = f"{notebook}.ipynb"
    records, line = graded_records(notebook, shown, cells, results)
    release = root / "exercises" / shown
    manifest = {"exercises": [e for e in course_manifest(release.parent)["exercises"]
                              if e["exercise"] == notebook]}
    found = Found(notebooks={notebook: (shown, nbformat.read(release, as_version=4))})
    gradescope = results_of(found, manifest, lambda *_: (records, line))
    kept = [r.to_json() for r in records]
    if which in SCHEDULED:
        kept = [{k: r[k] for k in _SCHEDULED_RECORD} for r in kept]
        gradescope["tests"] = [{k: t[k] for k in _SCHEDULED_TEST if k in t}
                               for t in gradescope["tests"]]
    return _stable_data({"notebook": notebook, "submission": which,
                         **({"scheduled": True} if which in SCHEDULED else {}),
                         "records": kept, "results.json": gradescope}, root)


def render(data: dict[str, Any]) -> str:
    """A golden file's text: indented JSON, keys in their order, one newline at the end."""
    return json.dumps(data, indent=1, ensure_ascii=False) + "\n"


def differences(golden: Any, now: Any, where: str = "") -> list[str]:
    """Each field where ``now`` differs from ``golden``, as ``where: what`` (a path such as
    ``records[l2_atomic_save].message``; text that differs by a line or more as a diff)."""
    if isinstance(golden, dict) and isinstance(now, dict):
        out = []
        for key in [*golden, *(k for k in now if k not in golden)]:
            inner = f"{where}.{key}" if where else str(key)
            if key not in now:
                out.append(f"{inner}: gone (golden: {_short(golden[key])})")
            elif key not in golden:
                out.append(f"{inner}: new ({_short(now[key])})")
            else:
                out += differences(golden[key], now[key], inner)
        return out
    if isinstance(golden, list) and isinstance(now, list):
        names = [_item_name(item, i) for i, item in enumerate(golden)]
        if len(golden) != len(now) or names != [_item_name(x, i) for i, x in enumerate(now)]:
            return [f"{where}: {len(golden)} items [{', '.join(names)}] became {len(now)} "
                    f"[{', '.join(_item_name(x, i) for i, x in enumerate(now))}]"]
        return [d for i, (g, n) in enumerate(zip(golden, now, strict=True))
                for d in differences(g, n, f"{where}[{names[i]}]")]
    if golden == now and type(golden) is type(now):
        return []
    if isinstance(golden, str) and isinstance(now, str) and "\n" in golden + now:
        diff = difflib.unified_diff(golden.splitlines(), now.splitlines(), "golden", "now",
                                    lineterm="", n=1)
        return [f"{where}:\n    " + "\n    ".join(diff)]
    return [f"{where}: golden {_short(golden)}, now {_short(now)}"]


def _item_name(item: Any, index: int) -> str:
    if isinstance(item, dict):
        for key in ("check_id", "name"):
            if isinstance(item.get(key), str):
                return item[key]
    return str(index)


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 300 else text[:297] + "..."


def _submissions(graded: dict[str, Any]):
    """(which, results) of one exercise's records as ``dev check --records`` writes them."""
    for which in RELEASED:
        if which in graded:
            yield which, graded[which]
    yield from sorted(graded.get("fixtures", {}).items())


def compare(root: Path, exercises: dict[str, Any]) -> list[str]:
    """What differs between the golden files and ``exercises`` (``dev check --records``'s
    ``exercises``: notebook -> its graded submissions), each naming the file and the field;
    a fixture without a golden file, and a golden file of no fixture, too."""
    problems = []
    for notebook, graded in exercises.items():
        expected = set()
        for which, results in _submissions(graded):
            path = golden_path(root, notebook, which)
            expected.add(path)
            shown = path.relative_to(root).as_posix()
            if not path.exists():
                problems.append(f"{shown}: no golden file for {which}")
                continue
            now = golden_of(notebook, which, results, root)
            if render(now) != path.read_text(encoding="utf-8"):
                found = differences(json.loads(path.read_text(encoding="utf-8")), now)
                problems += [f"{shown}: {d}" for d in found or ["the bytes differ (layout)"]]
        problems += [f"{p.relative_to(root).as_posix()}: a golden file of no fixture"
                     for p in sorted((root / GOLDEN / notebook).rglob("*.json"))
                     if p not in expected]
    return problems


def update(root: Path, exercises: dict[str, Any]) -> tuple[list[Path], list[Path]]:
    """Rewrite the golden files of ``exercises`` from their records; remove those of no
    fixture. Returns (files whose bytes changed, files removed)."""
    changed, removed = [], []
    for notebook, graded in exercises.items():
        expected = set()
        for which, results in _submissions(graded):
            path = golden_path(root, notebook, which)
            expected.add(path)
            text = render(golden_of(notebook, which, results, root))
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8")
                changed.append(path)
        for path in sorted((root / GOLDEN / notebook).rglob("*.json")):
            if path not in expected:
                path.unlink()
                removed.append(path)
    return changed, removed


def run(args, graded: dict[str, Any] | None) -> int:
    """``dev golden``: compare (exit 1 on a difference) or, with ``--update``, rewrite;
    ``graded`` is what dev check graded (``--records``'s ``exercises``)."""
    root = Path(args.root).resolve()
    if args.update:
        changed, removed = update(root, graded)
        count = sum(1 for _ in (root / GOLDEN).rglob("*.json"))
        print(f"{GOLDEN}: {len(changed)} file(s) written, {len(removed)} removed, "
              f"{count} in all")
        for path in [*changed, *removed]:
            print(f"  - {path.relative_to(root).as_posix()}")
        return 0
    problems = compare(root, graded)
    if problems:
        print(f"{GOLDEN}: {len(problems)} difference(s) from this grading:")
        print("\n".join(f"  - {p}" for p in problems))
        print(f"If the change is meant, rewrite them: {UPDATE_COMMAND}")
        return 1
    print(f"{GOLDEN}: every golden file as graded")
    return 0
