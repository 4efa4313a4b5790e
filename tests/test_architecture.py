"""The architecture as the tree shows it: packages with one job, no import cycles, small parts.

Measured on the source, not on a hand-kept table: every module of the course's code (``graders``,
``fake_llm``, ``course.py``, ``benchmarks``) is parsed, and its imports (at module level and inside
functions alike: a lazy import hides a cycle, it does not remove it) make the graph.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("graders", "fake_llm")
MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 60
#: Modules in the longest chain of project imports (22 before issue 31's cuts).
MAX_IMPORT_CHAIN = 19


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def _code_files() -> list[Path]:
    files = list(_modules().values()) + [ROOT / "course.py"]
    return files + sorted((ROOT / "benchmarks").glob("*.py"))


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The course modules ``name`` imports (``from pkg import mod`` counts as ``pkg.mod``)."""
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".")
                base = base[: len(base) - node.level + (1 if is_package else 0)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            targets = [f"{module}.{alias.name}" for alias in node.names] + [module]
        else:
            continue
        for target in targets:
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imports(name, path, modules) for name, path in modules.items()}


def test_the_import_graph_finder_sees_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_there_is_no_import_cycle():
    cycles = _cycles(_graph())
    assert not cycles, "modules that import each other (directly or round a loop): " + "; ".join(
        " <-> ".join(c) for c in cycles)


def _longest_chain(graph: dict[str, set[str]]) -> list[str]:
    """The longest chain of imports in ``graph`` (which has no cycle), its modules in order."""
    longest: dict[str, list[str]] = {}

    def chain(v: str) -> list[str]:
        if v not in longest:
            longest[v] = [v]  # a cycle would stop here; test_there_is_no_import_cycle finds it
            longest[v] = [v] + max((chain(w) for w in sorted(graph.get(v, ()))), key=len,
                                   default=[])
        return longest[v]

    return max((chain(v) for v in sorted(graph)), key=len, default=[])


def test_the_chain_finder_finds_the_longest_way_down():
    graph = {"a": {"b", "d"}, "b": {"c"}, "c": set(), "d": set(), "e": {"a"}}
    assert _longest_chain(graph) == ["e", "a", "b", "c"]


def test_the_longest_import_chain_is_within_the_cap():
    """A long chain is a reader's walk through many files for one path, and a module that loads
    much more than it needs: cut a link that is accidental (move the function to where it
    belongs), never hide it in a lazy import (the graph counts those too)."""
    chain = _longest_chain(_graph())
    assert len(chain) <= MAX_IMPORT_CHAIN, \
        f"{len(chain)} modules (cap {MAX_IMPORT_CHAIN}): " + " -> ".join(chain)


def test_no_module_is_longer_than_the_cap():
    long = {str(p.relative_to(ROOT)): n for p in _code_files()
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES}
    assert not long, f"modules over {MAX_MODULE_LINES} lines (split them by job): {long}"


def test_no_function_is_longer_than_60_lines():
    long = {}
    for path in _code_files():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    long[f"{path.relative_to(ROOT)}:{node.name}"] = lines
    assert not long, f"functions over {MAX_FUNCTION_LINES} lines: {long}"


@pytest.mark.parametrize("package", sorted(
    name for name, path in _modules().items() if path.name == "__init__.py"))
def test_every_package_says_what_its_one_job_is(package):
    path = _modules()[package]
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
    assert doc and len(doc.split()) >= 6, f"{package} needs a docstring that says its job"


def _notebook_imports() -> set[tuple[str, str]]:
    """(module, name) of every ``from graders... import name`` in lessons and exercises."""
    import json

    texts = [p.read_text(encoding="utf-8") for p in sorted((ROOT / "lessons").glob("*.py"))]
    authored = sorted((ROOT / "exercises" / "src").glob("*.py"))
    texts += [p.read_text(encoding="utf-8") for p in authored]
    for nb in sorted((ROOT / "exercises").glob("*.ipynb")):
        cells = json.loads(nb.read_text(encoding="utf-8"))["cells"]
        texts += ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
    found = set()
    pattern = re.compile(r"^from (graders[\w.]*) import (\([^)]*\)|[^\n]*)", re.M)
    for text in texts:
        for module, names in pattern.findall(text):
            for name in names.strip("()").split("#")[0].split(","):
                if name.strip():
                    found.add((module, name.split(" as ")[0].strip()))
    return found


#: Paths written into files that outlive a release: student workspaces' ``nbgrader_config.py``
#: and JupyterLab's pre-save hook (course directories' configs are rewritten by every build).
_WRITTEN_PATHS = [("graders.nbgrader_plumbing.validation", "install"),
                  ("graders.workspace", "before_save"),
                  ("graders.nbgrader_plumbing.preprocessors", "RunNothing"),
                  ("graders.nbgrader_plumbing.feedback", "FeedbackNotes")]
#: What notebooks of earlier releases import from elsewhere than graders.notebook: a student's
#: workspace keeps its copy of each notebook across releases, so each path stays, warning.
_EARLIER_PATHS = [("graders.harness", "Harness"), ("graders.hints", "Hints"),
                  ("graders.resume", "resume"), ("graders.selfcheck", "self_check"),
                  ("graders", "Submission"), ("graders", "crash_points"), ("graders", "run_point"),
                  ("graders.checks", "run_check")]


def test_lessons_and_exercises_import_the_course_only_through_the_notebook_api():
    pairs = _notebook_imports()
    assert ("graders.notebook", "Harness") in pairs and ("graders.notebook", "run_check") in pairs
    elsewhere = sorted(f"{m}.{n}" for m, n in pairs if m != "graders.notebook")
    assert not elsewhere, f"import these from graders.notebook: {elsewhere}"


def test_every_name_of_the_notebook_api_exists_and_is_documented_in_the_readme():
    import importlib

    import graders.notebook as api

    missing = [n for n in api.__all__ if not hasattr(importlib.import_module(api._WHERE[n]), n)]
    assert not missing, f"graders.notebook names what is gone: {missing}"
    assert {n for _, n in _notebook_imports()} <= set(api.__all__)
    assert "graders.notebook" in (ROOT / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize(("module", "name"), _EARLIER_PATHS + _WRITTEN_PATHS)
def test_what_earlier_notebooks_and_written_configs_import_still_works(module, name):
    """An earlier path is the notebook API's own object, and warns naming graders.notebook."""
    import importlib
    import warnings

    import graders.notebook as api

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        found = getattr(importlib.import_module(module), name)
    if (module, name) in _EARLIER_PATHS and module != "graders.checks":
        assert found is getattr(api, name)
        assert [w.category for w in caught] == [DeprecationWarning], caught
        assert f"from graders.notebook import {name}" in str(caught[0].message)
        assert api.EARLIER_PATHS_UNTIL in str(caught[0].message)


def test_the_earlier_paths_go_on_the_day_their_warning_names():
    """The four seven-line modules of earlier paths are kept only until the day their warning
    gives: after it, this fails until they are removed (with this test)."""
    import datetime

    from graders.notebook import EARLIER_PATHS_UNTIL

    assert datetime.date.today().isoformat() < EARLIER_PATHS_UNTIL, (
        "remove graders/harness.py, hints.py, resume.py, selfcheck.py and graders.__getattr__")


def _package_of(module: str) -> str:
    parts = module.split(".")
    return ".".join(parts[:2]) if len(parts) > 2 or (ROOT / Path(*parts)).is_dir() else parts[0]


def test_no_module_imports_a_private_name_from_another_package():
    """A name with a leading underscore is its package's own; another package asks for a public
    one (``graders.teaching`` once took ``judge.power._power_point``)."""
    found = []
    for name, path in _modules().items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and not node.level \
                    and node.module.split(".")[0] in PACKAGES \
                    and _package_of(node.module) != _package_of(name):
                found += [f"{name} imports {node.module}.{alias.name}" for alias in node.names
                          if alias.name.startswith("_") and not alias.name.startswith("__")]
    assert found == []


def test_nothing_below_the_command_line_imports_it():
    """The front ends sit on top: no package of the grader imports ``graders.cli`` (the
    ``solutions`` verb once lived in ``workspace`` and took the CLI's check back up)."""
    graph = _graph()
    upward = sorted(f"{name} -> {target}" for name, targets in graph.items()
                    if not name.startswith("graders.cli") for target in targets
                    if target.startswith("graders.cli"))
    assert upward == []


if __name__ == "__main__":  # `python -m tests.test_architecture`: the figures a closing note gives
    modules = _modules()
    chain = _longest_chain(_graph())
    lines = sum(len(p.read_text(encoding="utf-8").splitlines()) for p in modules.values())
    print(f"{len(modules)} modules in {', '.join(PACKAGES)}, {lines} lines; the longest import "
          f"chain has {len(chain)} modules (cap {MAX_IMPORT_CHAIN}): " + " -> ".join(chain))
