"""The exercises' checks: what each autograded test cell checks, and how a submission is graded.

``CHECKS`` maps a check id (the ``grade_id`` of an autograded test cell) to its `Check`. Two ways
to run them:

- :func:`grade_submission` grades a submission's source (the answer cells of one exercise
  notebook, from :func:`submission_from_notebook`) in fresh processes. Nothing the student's code
  does can change a verdict: the code runs in child processes, and this process reads what they
  left on disk and decides. It never raises on a bad submission: a syntax error, a missing
  function, a hang or an ``os._exit`` fails the affected checks with a message saying why.
- :func:`run_check` runs one visible check on the live functions of a student's kernel and shows
  the result, for the student's own information (their grade is computed by
  :func:`grade_submission` at grading time).

The messages say what was done, what came back and what was expected, in the lesson's words.
"""

from __future__ import annotations

import ast
import copy
import dataclasses
import inspect
import json
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from graders.loop.protocol import SIX_FIELDS
from graders.sandbox.serve import SandboxUnavailable
from graders.text import plural, short_json

__all__ = [
    "CHECKS",
    "Check",
    "CheckResult",
    "NOTEBOOKS",
    "GRADING_ENV",
    "ANSWER_CELLS",
    "NotebookError",
    "read_notebook",
    "run_check",
    "Points",
    "evaluate_check",
    "in_grading_kernel",
    "grade_submission",
    "submission_from_notebook",
    "checks_for",
    "counts_against",
    "notebook_of",
]

ROOT = Path(__file__).resolve().parents[2]
REFERENCE_LOOP = ROOT / "solutions" / "level2_reference.py"

LEVEL1 = "01_incomplete_checkpoint"
LEVEL2 = "02_two_latent_failures"
LEVEL3 = "03_power_cut"
LEVEL4 = "04_parallel_tool_calls"

#: The exercise notebooks (without ``.ipynb``) and a short name for each.
NOTEBOOKS: dict[str, str] = {
    LEVEL1: "Level 1: an incomplete checkpoint",
    LEVEL2: "Level 2: two latent failures",
    LEVEL3: "Level 3: survive a power cut",
    LEVEL4: "Level 4: several tool calls in one turn",
}

#: The grade_ids of each notebook's autograded answer cells, in the order their code is joined.
ANSWER_CELLS: dict[str, tuple[str, ...]] = {
    LEVEL1: ("l1_missing_fields_answer", "l1_save_checkpoint"),
    LEVEL2: ("l2_save_checkpoint", "l2_run_agent"),
    LEVEL3: ("l3_save_checkpoint",),
    LEVEL4: ("l4_run_agent",),
}

VISIBLE_SCENARIO = "support-tickets"
HIDDEN_SCENARIO = "long-migration"
#: Level 4's scenarios: several tool calls in one turn.
L4_VISIBLE = "incident-triage"
L4_HIDDEN = "release-audit"
L4_KINDS = ("killed_during_tool", "killed_during_model_call", "torn_write",
            "killed_before_rename")

#: The fields the Level 1 starter's checkpoint lacks.
MISSING_IN_STARTER = ("version", "task", "turns", "tokensUsed", "pendingToolUse")

#: Per field: what resume runs into without it (short, for check messages).
WITHOUT = {
    "version": "resume cannot tell which protocol version wrote the file, so it cannot refuse a "
    "format it does not know",
    "task": "resume cannot name the task the checkpoint belongs to, nor tell the user which task "
    "it is resuming",
    "turns": "the turn count restarts at zero, so a max-turn cap fires late or never",
    "tokensUsed": "the token count restarts at zero, so the compaction threshold is misjudged",
    "messages": "the model has no record of the conversation, so the task starts over",
    "pendingToolUse": "resume cannot tell a tool call was left dangling",
}

ATOMIC_KINDS = ("torn_write", "killed_before_rename")
SAVE_POINT_A_KINDS = ("killed_during_tool", "killed_during_model_call")

#: The checker's problems (``Verdict.evidence["problems"]``) that come from how a save writes.
WRITE_PROBLEMS = frozenset({"copy_over", "in_place_write", "partial_write", "invalid_json",
                            "not_a_save", "deleted_before_rename"})
#: The checker's problems that come from a missing or misplaced save point A.
SAVE_POINT_A_PROBLEMS = frozenset({"no_save_point_a", "save_point_a_after_tool",
                                   "pending_missing", "pending_mismatch", "pending_never_reset",
                                   "pending_before_message", "pending_without_input",
                                   "pending_incomplete"})
_ATOMIC = dict(success="after every crash checkpoint.json was one complete save")
_SAVE_POINT_A = dict(success="after every crash checkpoint.json accounted for every tool that "
                     "had run")

#: Said after a failed crash matrix: the fix is in the opt-in hints, never in the message.
HINT_LINE = "Stuck? hint() in your notebook shows one hint at a time."

#: Set to "1" in a grading kernel's environment: run_check then runs nothing (see run_check).
GRADING_ENV = "CHECKPOINT_LAB_GRADING"

#: How long the Level 1 answer cell may run in its fresh process, in seconds.
ANSWER_CELL_TIMEOUT = 20.0


@dataclass(frozen=True)
class Check:
    """One autograded check: the ``grade_id`` of its test cell, and what it checks.

    Attributes:
        id: the check id, also the ``grade_id`` of its test cell.
        notebook: the exercise notebook it belongs to (without ``.ipynb``).
        title: what it checks, in a few words.
        points: the points it is worth.
        hidden: whether it runs only at grading time.
        description: what it does, for the student (shown when a hidden check is met).
        answer_cells: the grade_ids of the answer cells whose code it runs.
        scenario: the ``fake_llm`` scenario it runs on, if any.
        kinds: the crash point kinds it judges (``no_crash`` always counts too), if any.
        success: what a pass means, in words.
    """

    id: str
    notebook: str
    title: str
    points: int
    hidden: bool
    description: str
    answer_cells: tuple[str, ...]
    scenario: str | None = None
    kinds: tuple[str, ...] = ()
    success: str = ""
    problem: str = ""


CHECKS: dict[str, Check] = {
    check.id: check
    for check in (
        Check(
            "l1_missing_fields", LEVEL1, "the five missing fields", 2, False,
            "runs your MISSING_FIELDS cell in a fresh Python process and compares the set with "
            "the fields the starter's checkpoint lacks",
            ("l1_missing_fields_answer",),
        ),
        Check(
            "l1_saves_all_six", LEVEL1, "all six fields saved", 3, False,
            "runs your save_checkpoint with the lesson's loop on support-tickets, to the end and "
            "killed while a tool runs, and reads the six fields back from checkpoint.json",
            ("l1_save_checkpoint",), VISIBLE_SCENARIO,
        ),
        Check(
            "l2_atomic_save", LEVEL2, "an atomic save", 3, False,
            "runs your code on support-tickets, tears every save part-way and kills the process "
            "just before every rename, and reads checkpoint.json after each crash",
            ANSWER_CELLS[LEVEL2], VISIBLE_SCENARIO, ATOMIC_KINDS, **_ATOMIC,
        ),
        Check(
            "l2_save_point_a", LEVEL2, "save point A", 3, False,
            "runs your code on support-tickets, kills the process while each tool runs and while "
            "each model call is in flight, and compares checkpoint.json with the tool ledger",
            ANSWER_CELLS[LEVEL2], VISIBLE_SCENARIO, SAVE_POINT_A_KINDS, **_SAVE_POINT_A,
        ),
        Check(
            "l2_atomic_save_hidden", LEVEL2, "an atomic save, on a longer task", 2, True,
            "runs the whole crash matrix for the save (torn writes, kills before each rename) on "
            "the longer long-migration scenario when your work is graded",
            ANSWER_CELLS[LEVEL2], HIDDEN_SCENARIO, ATOMIC_KINDS, **_ATOMIC,
        ),
        Check(
            "l2_save_point_a_hidden", LEVEL2, "save point A, on a longer task", 2, True,
            "runs the whole crash matrix for the save points (kills while each tool runs and "
            "while each model call is in flight) on the longer long-migration scenario when your "
            "work is graded",
            ANSWER_CELLS[LEVEL2], HIDDEN_SCENARIO, SAVE_POINT_A_KINDS, **_SAVE_POINT_A,
        ),
        *(Check(
            f"l3_{name}{suffix}", LEVEL3, title + (", on a longer task" if hidden else ""),
            2 if hidden else 3, hidden,
            f"runs your save with the lesson's loop on {scenario} once, then builds every state a "
            f"power cut could leave at each moment and checks that {what}",
            ANSWER_CELLS[LEVEL3], scenario, ("power_cut",),
            success=f"after every power cut {what}", problem=problem)
          for name, title, problem, what in (
              ("file_synced", "the bytes reach the disk before the rename",
               "data_not_synced", "checkpoint.json held a complete save"),
              ("directory_synced", "the rename reaches the disk before the next tool",
               "rename_not_synced", "no save the loop relied on was lost"))
          for suffix, hidden, scenario in (("", False, VISIBLE_SCENARIO),
                                           ("_hidden", True, HIDDEN_SCENARIO))),
        # Level 4 (graders.checks.parallel_tool_calls): each check judges its own group of problems
        # (``problem``)
        *(Check(
            f"l4_{name}{suffix}", LEVEL4, title + (", on a longer task" if hidden else ""),
            2 if hidden else 3, hidden,
            f"runs your run_agent with the given save on {scenario} once, then checks every "
            f"state a kill could leave (while each tool runs, while each model call is in "
            f"flight, in every save) and that {what}",
            ANSWER_CELLS[LEVEL4], scenario, L4_KINDS,
            success=f"after every crash {what}", problem=group)
          for name, title, group, what in (
              ("no_call_lost", "every call in flight on record", "in_flight",
               "every tool that had started was listed in pendingToolUse or recorded"),
              ("results_kept", "finished calls kept with their results", "kept",
               "every call that had returned was kept with its result"),
              ("one_result_message", "one result message per turn", "message",
               "messages held one result message per turn, in block order, valid for the API"))
          for suffix, hidden, scenario in (("", False, L4_VISIBLE), ("_hidden", True, L4_HIDDEN))),
    )
}


@dataclass
class CheckResult:
    """The outcome of one check on one submission.

    Attributes:
        check_id: the check's id (a key of ``CHECKS``).
        passed: whether the check passed.
        points_earned: its points if it passed, else 0.
        message: what was done, what came back, what was expected, in the lesson's words.
        verdicts: the crash harness's verdicts behind it (`graders.Verdict`), if any.
        summary: the message without the first failed crash point's verdict, for a table that
            lists the failed crash points under it ("" when it is the whole message).
    """

    check_id: str
    passed: bool
    points_earned: float
    message: str
    verdicts: list = field(default_factory=list)
    summary: str = ""

    @property
    def check(self) -> Check:
        """The `Check` this result belongs to."""
        return CHECKS[self.check_id]

    @property
    def points(self) -> int:
        """The points the check is worth."""
        return CHECKS[self.check_id].points

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able dict (``json.dumps`` works on it)."""
        return {
            "check_id": self.check_id,
            "passed": self.passed,
            "points_earned": self.points_earned,
            "message": self.message,
            "verdicts": [_verdict_dict(v) for v in self.verdicts],
            "summary": self.summary,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CheckResult:
        """The result ``to_dict`` described."""
        from graders.judge.verdict import Verdict

        return cls(
            check_id=data["check_id"],
            passed=bool(data["passed"]),
            points_earned=data["points_earned"],
            message=data["message"],
            verdicts=[Verdict.from_dict(v) for v in data.get("verdicts") or []],
            summary=data.get("summary", ""),
        )

    def __str__(self) -> str:
        from graders.checks.selfcheck import ResultTable

        return str(ResultTable([self]))

    def _repr_html_(self) -> str:
        from graders.checks.selfcheck import ResultTable

        return ResultTable([self])._repr_html_()

    def _repr_pretty_(self, printer, cycle: bool) -> None:
        printer.text(str(self))

    def __repr__(self) -> str:
        status = "PASS" if self.passed else "FAIL"
        return f"<CheckResult {self.check_id} {status} {self.points_earned:g}/{self.points}>"


def _verdict_dict(verdict) -> dict:
    return verdict.to_dict() if hasattr(verdict, "to_dict") else dict(verdict)


def _result(check_id: str, passed: bool, message: str, verdicts=()) -> CheckResult:
    points = CHECKS[check_id].points if passed else 0
    return CheckResult(check_id, passed, points, message, list(verdicts))


def checks_for(notebook: str, *, include_hidden: bool = True) -> list[Check]:
    """The checks of ``notebook`` (without ``.ipynb``), in the order they appear in it."""
    return [c for c in CHECKS.values()
            if c.notebook == notebook and (include_hidden or not c.hidden)]


def notebook_of(nb) -> str | None:
    """Which exercise notebook ``nb`` (a notebook dict) is, judged by its cells' grade_ids."""
    ids = {_grade_id(cell) for cell in nb.get("cells", [])}
    for notebook, cells in ANSWER_CELLS.items():
        test_ids = {c.id for c in checks_for(notebook)}
        if ids & (set(cells) | test_ids):
            return notebook
    return None


# -- a submission from a notebook --------------------------------------------------------------

class NotebookError(ValueError):
    """A file that is not a notebook we can read."""


_MARKER = re.compile(r"^# --- answer cell (?P<id>[A-Za-z0-9_]+)(?P<missing> \(missing\))? ---$",
                     re.M)


def _grade_id(cell) -> str | None:
    try:
        return cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
    except AttributeError:
        return None


def _cell_source(cell) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def read_notebook(nb_or_path) -> dict:
    """A notebook as a dict, from a dict or a path; raises `NotebookError` if it is not one."""
    if isinstance(nb_or_path, dict):
        return nb_or_path
    path = Path(nb_or_path)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise NotebookError(
            f"{path} is not a notebook: it is not UTF-8 text ({exc.reason})") from exc
    try:
        nb = json.loads(text)
    except json.JSONDecodeError as exc:
        raise NotebookError(
            f"{path} is not a notebook: it is not JSON (line {exc.lineno}: {exc.msg})") from exc
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        raise NotebookError(f"{path} is not a notebook: its JSON has no list of cells")
    return nb


def submission_from_notebook(nb_or_path, notebook: str = LEVEL2) -> str:
    """The student's code in ``nb_or_path``: the sources of ``notebook``'s answer cells, joined.

    ``nb_or_path`` is a notebook (an ``nbformat`` node or a plain dict) or the path of an
    ``.ipynb`` file. The answer cells are found by their ``grade_id``, whatever their order in
    the notebook, and joined in the order of ``ANSWER_CELLS[notebook]``; each starts with a
    comment line ``# --- answer cell <grade_id> ---`` (``(missing)`` is added when the notebook
    has no such cell), which :func:`grade_submission` uses to tell the cells apart.
    Raises `NotebookError` for a file that is not a notebook.
    """
    if notebook not in ANSWER_CELLS:
        raise ValueError(f"unknown exercise notebook {notebook!r}; one of {sorted(ANSWER_CELLS)}")
    nb = read_notebook(nb_or_path)
    found: dict[str, list[str]] = {}
    for cell in nb["cells"]:
        if not isinstance(cell, dict):
            continue
        grade_id = _grade_id(cell)
        if grade_id in ANSWER_CELLS[notebook] and cell.get("cell_type") == "code":
            found.setdefault(grade_id, []).append(_cell_source(cell))
    parts = []
    for grade_id in ANSWER_CELLS[notebook]:
        if grade_id in found:
            body = "\n\n".join(s.rstrip("\n") for s in found[grade_id])
            parts.append(f"# --- answer cell {grade_id} ---\n{body}\n")
        else:
            parts.append(f"# --- answer cell {grade_id} (missing) ---\n")
    return "\n".join(parts)


def _split_cells(source: str) -> dict[str, str | None] | None:
    """The cells of a joined submission: grade_id -> source (None if missing); None if unmarked."""
    marks = list(_MARKER.finditer(source))
    if not marks:
        return None
    cells: dict[str, str | None] = {}
    for mark, following in zip(marks, [*marks[1:], None], strict=True):
        end = following.start() if following else len(source)
        body = source[mark.end() + 1:end]
        cells[mark["id"]] = None if mark["missing"] else body
    return cells


def _cell_code(cells: dict | None, source: str, grade_id: str) -> tuple[str | None, str | None]:
    """(code, problem): one answer cell's code from a submission, or why it is not there."""
    if cells is None:
        return source, None
    if grade_id not in cells or cells[grade_id] is None:
        return None, (f"the notebook has no answer cell {grade_id}: it was deleted, or its "
                      "metadata changed; get a fresh copy of the cell from the released notebook")
    return cells[grade_id], None


def _syntax_problem(code: str, where: str) -> str | None:
    try:
        compile(code, where, "exec", dont_inherit=True)
    except ValueError as exc:  # null bytes
        return f"Python could not read {where}: {exc}. Fix the cell so that it runs"
    except SyntaxError as exc:
        line = (exc.text or "").strip()
        hint = ""
        if line[:1] in ("%", "!"):
            hint = " (IPython commands such as %time or !ls cannot run when your work is graded)"
        return (f"Python could not read {where}: {exc.msg} at line {exc.lineno}"
                f"{': ' + line if line else ''}{hint}. Fix the cell so that it runs")
    return None


def _defined_names(code: str) -> set[str]:
    names: set[str] = set()
    for node in ast.parse(code).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign | ast.AugAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return names


# -- Level 1: the missing fields ------------------------------------------------------------------

def _describe(value) -> dict:
    """A JSON-able description of the student's MISSING_FIELDS value (no judgement)."""
    description = {"defined": True, "type": type(value).__name__, "repr": repr(value)[:300]}
    if isinstance(value, set | frozenset | list | tuple):
        items = []
        for item in value:
            items.append({"str": item} if isinstance(item, str) else {"repr": repr(item)[:100]})
        description["items"] = items
    return description


_EVAL_CELL = """\
import json, sys
_dumps, _open, _out = json.dumps, open, sys.argv[1]
def _report(payload):
    with _open(_out, "w", encoding="utf-8") as f:
        f.write(_dumps(payload))
{describe}
_source = sys.stdin.read()
_namespace = {{"__name__": "__answer__"}}
try:
    exec(compile(_source, "<answer cell l1_missing_fields_answer>", "exec"), _namespace)
except BaseException as exc:
    _report({{"error": type(exc).__name__ + ": " + str(exc)[:300]}})
else:
    if "MISSING_FIELDS" in _namespace:
        _report(_describe(_namespace["MISSING_FIELDS"]))
    else:
        _report({{"defined": False}})
"""


def _evaluate_answer_cell(code: str, timeout: float = ANSWER_CELL_TIMEOUT,
                          fallback: bool = False) -> dict:
    """Run the MISSING_FIELDS answer cell in the sandbox (or, for a self-check where there is
    none, in a fresh Python); describe what it defined."""
    from graders.sandbox.engine import grading_problem
    from graders.sandbox.serve import SandboxUnavailable, record

    problem = grading_problem()
    if problem is None:
        rec = record(code, None, mode="missing_fields", timeout=timeout,
                     sandbox=os.environ.get("CHECKPOINT_LAB_SANDBOX", "on") != "off")
        if rec.described is not None:
            return rec.described
        if rec.ended == "not_loaded":
            error = (rec.load or {}).get("error") or {}
            return {"error": f"{error.get('type')}: {error.get('message', '')}"[:300]}
        if rec.ended == "hung":
            return {"problem": f"the answer cell was still running after {timeout:g} s; it "
                    "only needs to define MISSING_FIELDS"}
        return {"problem": "the answer cell ended the Python process (exit status "
                f"{rec.exit_code}) before MISSING_FIELDS could be read"}
    if not fallback:
        raise SandboxUnavailable(problem)
    program = _EVAL_CELL.format(describe=inspect.getsource(_describe))
    with tempfile.TemporaryDirectory(prefix="checkpoint-lab-l1-") as tmp:
        out = Path(tmp) / "answer.json"
        try:
            proc = subprocess.run(
                [sys.executable, "-I", "-c", program, str(out)], input=code, text=True,
                cwd=tmp, capture_output=True, timeout=timeout,
            )
        except subprocess.TimeoutExpired:
            return {"problem": f"the answer cell was still running after {timeout:g} s; it only "
                    "needs to define MISSING_FIELDS"}
        try:
            return json.loads(out.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {"problem": "the answer cell ended the Python process (exit status "
                    f"{proc.returncode}) before MISSING_FIELDS could be read"}


def _closest_field(name: str) -> str | None:
    def squash(text: str) -> str:
        return re.sub(r"[^a-z]", "", text.lower())

    return next((f for f in SIX_FIELDS if squash(f) == squash(name)), None)


def _judge_missing_fields(description: dict) -> tuple[bool, str]:
    """Judge a `_describe` result (or an evaluation problem) against the five missing fields."""
    done = "Ran your MISSING_FIELDS cell in a fresh Python process"
    expected = "Expected a set of the five field names the starter's checkpoint lacks."
    if "problem" in description:
        return False, f"{done}, but {description['problem']}. {expected}"
    if "error" in description:
        return False, f"{done}; it raised {description['error']}. {expected}"
    if not description.get("defined"):
        return False, (f"{done}; it does not define MISSING_FIELDS. Keep the name "
                       f"MISSING_FIELDS in the cell. {expected}")
    items = description.get("items")
    if not isinstance(items, list):
        return False, (f"{done}: MISSING_FIELDS is a {description.get('type')} "
                       f"({description.get('repr')}). {expected[:-1]}, written like "
                       '{"a", "b"}.')
    names = [i["str"] for i in items if isinstance(i, dict) and isinstance(i.get("str"), str)]
    others = [i.get("repr", "?") for i in items
              if not (isinstance(i, dict) and isinstance(i.get("str"), str))]
    given = set(names)
    wanted = set(MISSING_IN_STARTER)
    if not given and not others:
        return False, f"{done}: MISSING_FIELDS is empty. {expected}"
    found = given & wanted
    notes = []
    for name in sorted(given - wanted):
        close = _closest_field(name)
        if name == "messages":
            notes.append("messages is the one field the starter does save")
        elif close and close not in given:
            notes.append(f"{name!r} is not spelled as the checkpoint spells its key {close!r}")
        elif close:
            notes.append(f"{name!r} names {close!r} a second time, spelled differently")
        else:
            notes.append(f"{name!r} is not one of the six fields")
    notes.extend(f"{item} is not a field name (write each name as a string)" for item in others)
    lacking = [f for f in MISSING_IN_STARTER if f not in given
               and not any(_closest_field(n) == f for n in given - wanted)]
    for name in lacking:
        notes.append(f"{name} is missing; without it {WITHOUT[name]}")
    if not notes:
        return True, (f"{done}: MISSING_FIELDS names all five fields the starter's checkpoint "
                      f"lacks ({', '.join(MISSING_IN_STARTER)}).")
    return False, (f"{done}: MISSING_FIELDS has {len(found)} of the 5: " + "; ".join(notes)
                   + ".")


def _grade_missing_fields(code: str | None, problem: str | None,
                          timeout: float | None = None, fallback: bool = False) -> CheckResult:
    check_id = "l1_missing_fields"
    if code is None:
        return _result(check_id, False, f"Could not run this check: {problem}.")
    syntax = _syntax_problem(code, "the answer cell l1_missing_fields_answer")
    if syntax:
        return _result(check_id, False, syntax + ".")
    timeout = ANSWER_CELL_TIMEOUT if timeout is None else timeout
    return _result(check_id, *_judge_missing_fields(_evaluate_answer_cell(code, timeout,
                                                                           fallback)))


# -- Level 1: a save with all six fields ---------------------------------------------------------

def _reference_loop_source() -> str:
    """The reference ``run_agent`` (solutions/level2_reference.py) and the imports it uses."""
    try:
        text = REFERENCE_LOOP.read_text(encoding="utf-8")
    except OSError as exc:
        raise RuntimeError(f"the reference loop {REFERENCE_LOOP} is missing ({exc.strerror}); "
                           "run the grader from a full copy of the course") from exc
    tree = ast.parse(text)
    parts = []
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module == "__future__":
            continue
        if isinstance(node, ast.Import | ast.ImportFrom) or (
                isinstance(node, ast.FunctionDef) and node.name == "run_agent"):
            parts.append(ast.get_source_segment(text, node))
    return "\n\n".join(parts) + "\n"


def _reference_saves(scenario_name: str) -> list[dict]:
    """The states the reference loop saves on ``scenario_name``, in order (run in memory)."""
    from fake_llm import load_scenario

    namespace: dict[str, Any] = {"__name__": "reference_loop"}
    exec(compile(_reference_loop_source(), str(REFERENCE_LOOP), "exec"), namespace)
    saves: list[dict] = []
    namespace["save_checkpoint"] = lambda state: saves.append(copy.deepcopy(state))
    scenario = load_scenario(scenario_name)
    namespace["run_agent"](scenario.task, copy.deepcopy(scenario.tools), scenario.model(),
                           scenario.executor())
    return saves


_TYPES = {
    "version": ("a whole number", lambda v: isinstance(v, int) and not isinstance(v, bool)),
    "task": ("text", lambda v: isinstance(v, str)),
    "turns": ("a whole number", lambda v: isinstance(v, int) and not isinstance(v, bool)),
    "tokensUsed": ("a whole number", lambda v: isinstance(v, int) and not isinstance(v, bool)),
    "messages": ("a list of messages", lambda v: isinstance(v, list)),
    "pendingToolUse": ("null or {id, name, input}", lambda v: v is None or isinstance(v, dict)),
}



def _compare_fields(on_disk, expected: dict) -> list[str]:
    """What is wrong with a checkpoint read from disk, field by field (empty: nothing)."""
    if not isinstance(on_disk, dict):
        return [f"checkpoint.json holds {type(on_disk).__name__} JSON, not an object with the "
                "six fields"]
    absent = [f for f in SIX_FIELDS if f not in on_disk]
    problems = []
    if absent:
        problems.append("it lacks " + ", ".join(absent))
    for name in SIX_FIELDS:
        if name in absent:
            continue
        value, want = on_disk[name], expected[name]
        kind, ok = _TYPES[name]
        if not ok(value):
            problems.append(f"{name} is {short_json(value)}, expected {kind} ({short_json(want)})")
        elif name == "pendingToolUse" and value is not None and want is not None:
            got = {k: value.get(k) for k in ("id", "name", "input")}
            if got != want:
                problems.append(f"pendingToolUse is {short_json(value)}, expected the "
                                f"dangling call {short_json(want)}")
        elif name == "messages" and value != want:
            problems.append(f"messages holds {len(value)} messages that differ from the "
                            f"{len(want)} the loop held")
        elif value != want:
            problems.append(f"{name} is {short_json(value)}, the loop held {short_json(want)}")
    return problems


def _read_checkpoint(observation) -> tuple[Any, str | None]:
    """(parsed checkpoint, problem) from a harness observation of the disk."""
    if observation.parse_error is not None:
        return None, f"checkpoint.json {observation.parse_error}"
    if observation.checkpoint is None:
        return None, "there was no checkpoint.json in the working directory"
    return observation.state, None


def _how_it_ended(observation) -> str | None:
    """Why a run that should have finished did not, from the observation (None: it finished)."""
    if observation.ended == "finished":
        return None
    return f"the run {observation.detail}"


def _grade_saves_all_six(submission, where: str, timeout: float | None,
                         fallback: bool = False) -> CheckResult:
    """Run the student's save with the reference loop: to the end, and killed while a tool runs."""
    from graders.inprocess.harness import HarnessError
    from graders.sandbox.engine import harness_for

    check_id = "l1_saves_all_six"
    scenario = VISIBLE_SCENARIO
    saves = _reference_saves(scenario)
    pending_saves = [i for i, s in enumerate(saves) if s["pendingToolUse"] is not None]
    middle = pending_saves[len(pending_saves) // 2]
    tool_k = pending_saves.index(middle) + 1
    done = f"Ran {where} with the lesson's loop on {scenario}"
    harness, _note = harness_for(submission, timeout, allow_fallback=fallback)
    with harness:
        finished = harness.run_point(scenario, "no_crash")
        if finished.ended in ("not_loaded", "skipped"):
            return _result(check_id, False, f"Could not run {where}: {finished.detail}")
        ended = _how_it_ended(finished)
        if ended:
            return _result(check_id, False, f"{done}: {ended}. Expected the run to finish and "
                           "leave the six fields in checkpoint.json.")
        checkpoint, problem = _read_checkpoint(finished)
        if problem:
            return _result(check_id, False, f"{done}; after the full run {problem}. Expected "
                           "save_checkpoint to write checkpoint.json in the current directory.")
        problems = _compare_fields(checkpoint, saves[-1])
        if problems:
            absent = [f for f in SIX_FIELDS if isinstance(checkpoint, dict) and f not in checkpoint]
            why = "; ".join(f"without {f}, {WITHOUT[f]}" for f in absent[-1:])
            return _result(check_id, False, f"{done}. After the full run checkpoint.json: "
                           + "; ".join(problems) + ". Expected all six fields as the loop held "
                           "them" + (f" ({why})." if why else "."))
        try:
            killed = harness.run_point(scenario, f"killed_during_tool_{tool_k}")
        except HarnessError as exc:
            return _result(check_id, False, f"{done}, but could not kill it while tool {tool_k} "
                           f"ran: {exc}.")
    checkpoint, problem = _read_checkpoint(killed)
    if problem:
        return _result(check_id, False, f"{done}, killed while tool {tool_k} ran: {problem}. "
                       "Expected the save made just before the tool ran.")
    problems = _compare_fields(checkpoint, saves[middle])
    if problems:
        return _result(check_id, False, f"{done}, killed while tool {tool_k} ran. "
                       "checkpoint.json: " + "; ".join(problems) + ". Expected the fields the "
                       "loop held at its last save, with pendingToolUse naming the call in flight "
                       "(copy each field from state; do not write a fixed value).")
    final, call = saves[-1], saves[middle]["pendingToolUse"]["name"]
    return _result(check_id, True, (
        f"{done}: after the full run checkpoint.json holds all six fields as the loop held them "
        f"(version {final['version']}, turns {final['turns']}, tokensUsed {final['tokensUsed']}, "
        f"{len(final['messages'])} messages, pendingToolUse null), and killed while tool "
        f"{tool_k} ran it names that call in pendingToolUse ({call})."
    ))


_LOOP_MARK = "# --- the lesson's loop, added by the grader ---"


def _level1_save_source(code: str) -> str:
    return (f"# --- answer cell l1_save_checkpoint ---\n{code.rstrip()}\n\n\n{_LOOP_MARK}\n"
            + _reference_loop_source())


_YOUR_LINE = re.compile(r"line (\d+) of your code")


def _relocate(result: CheckResult, source: str) -> CheckResult:
    """``result`` with "line N of your code" (a line of the joined ``source``) said per cell."""
    starts = []  # (first line of the part, what the part is)
    for number, line in enumerate(source.splitlines(), 1):
        mark = _MARKER.match(line)
        if mark:
            starts.append((number + 1, f"the answer cell {mark['id']}"))
        elif line == _LOOP_MARK:
            starts.append((number + 1, "the lesson's loop (run_agent), which called your save"))
    if not starts:
        return result

    def where(match: re.Match) -> str:
        n = int(match[1])
        first, part = max(((f, p) for f, p in starts if f <= n), default=(1, "your code"))
        return f"line {n - first + 1} of {part}"

    def fix(text: str) -> str:
        return _YOUR_LINE.sub(where, text) if text else text

    result.message, result.summary = fix(result.message), fix(result.summary)
    result.verdicts = [dataclasses.replace(v, message=fix(v.message))
                       if dataclasses.is_dataclass(v) else v for v in result.verdicts]
    return result


def _one_answer_cell(source: str, grade_id: str, name: str) -> tuple[str | None, str | None]:
    """(code, None) of answer cell ``grade_id`` in ``source``, or (None, why it cannot run):
    missing, a syntax error, or no top-level definition of ``name``."""
    code, problem = _cell_code(_split_cells(source), source, grade_id)
    if code is not None:
        problem = _syntax_problem(code, f"the answer cell {grade_id}")
        if problem is None and name not in _defined_names(code):
            problem = (f"the answer cell {grade_id} does not define {name} at its top level; "
                       "keep the name and define it with def")
    return (None, problem) if problem else (code, None)


def _grade_level1_save(code: str | None, problem: str | None, timeout,
                       fallback: bool = False) -> CheckResult:
    from graders.submission import Submission

    check_id = "l1_saves_all_six"
    if code is None:
        return _result(check_id, False, f"Could not run this check: {problem}.")
    syntax = _syntax_problem(code, "the answer cell l1_save_checkpoint")
    if syntax:
        return _result(check_id, False, syntax + ".")
    if "save_checkpoint" not in _defined_names(code):
        return _result(check_id, False, "The answer cell l1_save_checkpoint does not define "
                       "save_checkpoint at its top level. Keep the name save_checkpoint and "
                       "define it with def at the top of the cell.")
    source = _level1_save_source(code)
    submission = Submission.from_source(source, name=LEVEL1, filename="<your answer cells>")
    return _relocate(_grade_saves_all_six(submission, "your save_checkpoint", timeout, fallback),
                     source)


# -- Level 2: the crash matrix -----------------------------------------------------------------

_KIND_WORDS = {
    "torn_write": "torn writes",
    "killed_before_rename": "kills just before a rename",
    "killed_during_tool": "kills while a tool runs",
    "killed_during_model_call": "kills while the model is called",
}


def _kind_of(verdict) -> str:
    kind = getattr(verdict, "kind", None)
    if kind:
        return kind
    return re.sub(r"_\d+$", "", re.sub(r"_save_\d+$", "", verdict.point))


def counts_against(check_id: str, verdict) -> bool:
    """Whether ``verdict`` fails check ``check_id``.

    Each check judges its own crash points (``Check.kinds``, and ``no_crash``), and nothing is
    excused there because another check also fails: the checker judges a kill in the middle of
    a save only for what the save left on disk, and a kill at a call for which tools left a
    trace, so a fix of one failure earns that check's points on its own.
    """
    if verdict.passed or getattr(verdict, "skipped", False):
        return False
    if CHECKS[check_id].notebook == LEVEL4:  # judges its own group of problems
        from graders.checks.parallel_tool_calls import counts_against_parallel

        return counts_against_parallel(CHECKS[check_id], verdict)
    if CHECKS[check_id].problem:  # a power-cut check judges its own cause
        from graders.checks.power_cut import counts_against_power

        return counts_against_power(CHECKS[check_id], verdict)
    if _kind_of(verdict) == "no_crash":
        # the end of the run is shared: a save point problem found there is save point A's
        problems = set((verdict.evidence or {}).get("problems") or ())
        if problems and problems <= SAVE_POINT_A_PROBLEMS | {"no_save_point_b", "incomplete"}:
            return CHECKS[check_id].kinds != ATOMIC_KINDS
    return True


def _judge_matrix(check: Check, verdicts: list) -> CheckResult:
    """Turn the verdicts of one scenario into this check's result."""
    mine = [v for v in verdicts if _kind_of(v) in (*check.kinds, "no_crash", "load")]
    load = [v for v in mine if _kind_of(v) == "load"]
    if load:
        return _result(check.id, False, f"Could not run your code on {check.scenario}: "
                       f"{load[0].message}", load)
    skipped = [v for v in mine if getattr(v, "skipped", False)]
    if skipped or not mine:
        reason = skipped[0].message if skipped else "the crash harness ran no crash point"
        return _result(check.id, False, f"Could not run this check here: {reason}", mine)
    crashes = [v for v in mine if _kind_of(v) != "no_crash"]
    kinds = " and ".join(_KIND_WORDS.get(k, k) for k in check.kinds)
    points = plural(len(crashes), "crash point")
    done = f"Ran your code on {check.scenario} to the end and at {points} ({kinds})"
    unfinished = [v for v in mine if _kind_of(v) == "no_crash" and counts_against(check.id, v)]
    if unfinished:
        return _result(check.id, False, f"Ran your code on {check.scenario} with no crash at all, "
                       f"and it did not get through: {unfinished[0].message}", mine)
    failed = [v for v in mine if counts_against(check.id, v)]
    if not failed:
        return _result(check.id, True, f"{done}: {check.success}.", mine)
    first = failed[0]
    more = (f" ({plural(len(failed) - 1, 'more crash point')} failed too)"
            if len(failed) > 1 else "")
    summary = f"{done}; {len(failed)} of {len(crashes)} failed."
    result = _result(check.id, False, f"{summary} At {first.point}: {first.message}{more}"
                     f" {HINT_LINE}", mine)
    result.summary = summary
    return result



def _level2_problem(cells: dict | None, source: str) -> tuple[str | None, str | None]:
    """(code, problem): the Level 2 code to run, or why it cannot run."""
    if cells is None:
        codes = {"your submission": source}
    else:
        codes = {}
        for grade_id in ANSWER_CELLS[LEVEL2]:
            code, problem = _cell_code(cells, source, grade_id)
            if problem:
                return None, problem
            codes[f"the answer cell {grade_id}"] = code
    for where, code in codes.items():
        syntax = _syntax_problem(code, where)
        if syntax:
            return None, syntax
    names = set().union(*(_defined_names(c) for c in codes.values()))
    missing = [n for n in ("save_checkpoint", "run_agent") if n not in names]
    if missing:
        return None, (" and ".join(missing) + f" {'is' if len(missing) == 1 else 'are'} not "
                      "defined at the top level of your answer cells. Keep the names "
                      "save_checkpoint and run_agent, each defined with def at the top of its cell")
    return source, None


def _run_level2(submission, checks: list[Check], timeout,
                fallback: bool = False) -> dict[str, CheckResult]:
    """Run ``checks`` on ``submission``: one harness per scenario, side by side for a source."""
    from concurrent.futures import ThreadPoolExecutor

    from graders.sandbox.engine import harness_for

    scenarios = list(dict.fromkeys(c.scenario for c in checks))

    def matrix(scenario: str) -> list:
        kinds = {"no_crash", *(k for c in checks if c.scenario == scenario for k in c.kinds)}
        harness, _note = harness_for(submission, timeout, allow_fallback=fallback)
        with harness:
            return harness.run_matrix(scenario, kinds)

    if submission.in_process or len(scenarios) == 1:
        verdicts = {scenario: matrix(scenario) for scenario in scenarios}
    else:
        # The work is in the harnesses' child processes; threads only wait for them.
        with ThreadPoolExecutor(len(scenarios)) as pool:
            verdicts = dict(zip(scenarios, pool.map(matrix, scenarios), strict=True))
    return {c.id: _judge_matrix(c, verdicts[c.scenario]) for c in checks}


def _grade_level2(source: str, checks: list[Check], timeout,
                  fallback: bool = False) -> dict[str, CheckResult]:
    from graders.submission import Submission

    code, problem = _level2_problem(_split_cells(source), source)
    if problem:
        return {c.id: _result(c.id, False, f"Could not run your code: {problem}.") for c in checks}
    submission = Submission.from_source(code, name=LEVEL2, filename="<your answer cells>")
    return {check_id: _relocate(result, code)
            for check_id, result in _run_level2(submission, checks, timeout, fallback).items()}


# -- grading and self-checks ---------------------------------------------------------------------

def _grader_fault(check_id: str, exc: BaseException) -> CheckResult:
    return _result(check_id, False, f"The grader could not run this check "
                   f"({type(exc).__name__}: {exc}). This is a fault in the grader, not in your "
                   "code: tell your instructor.")


def _cannot_grade(check_id: str, exc: BaseException) -> CheckResult:
    return _result(check_id, False, f"Could not grade this check on this machine: {exc}")


def grade_submission(source: str, notebook: str, *, include_hidden: bool = True,
                     timeout: float | None = None,
                     allow_fallback: bool = False) -> dict[str, CheckResult]:
    """Run every check of ``notebook`` on ``source``; return check id -> `CheckResult`.

    ``source`` is the student's code, as :func:`submission_from_notebook` joins it (or any Python
    source defining the answer cells' names). The code runs only in fresh child processes; this
    process decides. ``timeout`` bounds each run in seconds (the harness's default if None).
    The code runs in the sandbox, watched from outside (:mod:`graders.sandbox`); where that is
    impossible, ``allow_fallback`` (a student's self-check) uses the in-process harness instead,
    and otherwise every check fails saying why. Never raises on a bad submission: the affected
    checks fail with a message why.
    """
    if notebook not in NOTEBOOKS:
        raise ValueError(f"unknown exercise notebook {notebook!r}; one of {sorted(NOTEBOOKS)}")
    checks = checks_for(notebook, include_hidden=include_hidden)
    results: dict[str, CheckResult] = {}
    if notebook == LEVEL1:
        from concurrent.futures import ThreadPoolExecutor

        cells = _split_cells(source)

        def one(check: Check) -> CheckResult:
            try:
                code, problem = _cell_code(cells, source, check.answer_cells[0])
                if check.id == "l1_missing_fields":
                    return _grade_missing_fields(code, problem, timeout, allow_fallback)
                return _grade_level1_save(code, problem, timeout, allow_fallback)
            except SandboxUnavailable as exc:
                return _cannot_grade(check.id, exc)
            except Exception as exc:  # noqa: BLE001 - one check's fault must not stop the others
                return _grader_fault(check.id, exc)

        # each check is a run in its own sandbox: side by side, the threads only wait
        with ThreadPoolExecutor(len(checks) or 1) as pool:
            results = dict(zip((c.id for c in checks), pool.map(one, checks), strict=True))
    elif notebook in (LEVEL3, LEVEL4):
        from graders.checks.parallel_tool_calls import grade_level4
        from graders.checks.power_cut import grade_level3

        try:
            grade = grade_level3 if notebook == LEVEL3 else grade_level4
            results = grade(source, checks, timeout)
        except SandboxUnavailable as exc:
            results = {c.id: _cannot_grade(c.id, exc) for c in checks}
        except Exception as exc:  # noqa: BLE001
            results = {c.id: _grader_fault(c.id, exc) for c in checks}
    else:
        try:
            results = _grade_level2(source, checks, timeout, allow_fallback)
        except SandboxUnavailable as exc:
            results = {c.id: _cannot_grade(c.id, exc) for c in checks}
        except Exception as exc:  # noqa: BLE001
            results = {c.id: _grader_fault(c.id, exc) for c in checks}
    return {c.id: results[c.id] for c in checks}


def _live(namespace: dict, name: str, cell: str):
    value = namespace.get(name)
    if not callable(value):
        raise LookupError(f"{name} is not defined in this notebook yet: run the answer cell "
                          f"{cell} first (and keep the name {name})")
    return value


def _cell_of(function) -> str | None:
    """The whole source of the cell (or file) that defined ``function``, as it was run."""
    import linecache

    filename = getattr(getattr(function, "__code__", None), "co_filename", None)
    if not filename:
        return None
    lines = linecache.getlines(filename)
    return "".join(lines) if lines else None


def _source_of_cells(functions: dict[str, Any]) -> str | None:
    """The answer cells that defined ``functions`` (grade_id -> function), joined as grading
    joins them (each under its marker), or None if a cell's source is not to be had."""
    cells: dict[str, str] = {}
    for grade_id, function in functions.items():
        cell = _cell_of(function)
        if cell is None:
            return None
        if cell not in cells.values():
            cells[grade_id] = cell
    if len(cells) < len(functions):  # one cell (or file) defines them all
        return next(iter(cells.values()))
    return "\n\n".join(f"# --- answer cell {grade_id} ---\n{cell.rstrip()}\n"
                        for grade_id, cell in cells.items())


def evaluate_check(check_id: str, namespace: dict) -> CheckResult:
    """Run visible check ``check_id`` on the live names in ``namespace`` (a kernel's globals).

    Used in the student's own kernel, for their information. Where grading's sandbox can run
    (Linux with bubblewrap and strace), the cells that defined the functions are graded exactly
    as grading will grade them; elsewhere the live functions run in forked children of the
    kernel (the in-process self-check; POSIX only) and the message says so in its first line.
    Hidden checks are not run here (see :func:`run_check`).
    """
    from graders.sandbox.engine import SELF_CHECK_NOTE, grading_problem

    result = _evaluate_check(check_id, namespace)
    if (check_id != "l1_missing_fields" and CHECKS[check_id].notebook not in (LEVEL3, LEVEL4)
            and grading_problem() is not None):
        result.message = f"{SELF_CHECK_NOTE}\n{result.message}"
    return result


def _evaluate_check(check_id: str, namespace: dict) -> CheckResult:
    from graders.sandbox.engine import grading_problem
    from graders.submission import Submission

    check = CHECKS[check_id]
    if check.hidden:
        raise ValueError(f"{check_id} is a hidden check: it runs only when your work is graded")
    try:
        if check_id == "l1_missing_fields":
            if "MISSING_FIELDS" not in namespace:
                return _result(check_id, False, "MISSING_FIELDS is not defined in this notebook "
                               "yet: run the answer cell that defines it first.")
            passed, message = _judge_missing_fields(_describe(namespace["MISSING_FIELDS"]))
            return _result(check_id, passed, message.replace(" in a fresh Python process", ""))
        if check_id == "l1_saves_all_six":
            save = _live(namespace, "save_checkpoint", "l1_save_checkpoint")
            cell = _cell_of(save) if grading_problem() is None else None
            if cell is not None:
                return _grade_level1_save(cell, None, None)
            loop: dict[str, Any] = {"__name__": "reference_loop"}
            exec(compile(_reference_loop_source(), str(REFERENCE_LOOP), "exec"), loop)
            loop["save_checkpoint"] = save
            return _grade_saves_all_six(Submission.from_functions(loop["run_agent"], save),
                                        "your save_checkpoint", None)
        if check.notebook == LEVEL3:
            from graders.checks.power_cut import grade_level3

            cell = _cell_of(_live(namespace, "save_checkpoint", "l3_save_checkpoint"))
            if cell is None:
                return _result(check_id, False, "Could not run this check: the source of your "
                               "save_checkpoint cell is not to be had; run that cell again.")
            try:
                return grade_level3(f"# --- answer cell l3_save_checkpoint ---\n{cell}",
                                    [check], None)[check_id]
            except SandboxUnavailable as exc:
                return _result(check_id, False, f"Could not run this check here: {exc}.")
        if check.notebook == LEVEL4:
            from graders.checks.parallel_tool_calls import grade_level4

            cell = _cell_of(_live(namespace, "run_agent", "l4_run_agent"))
            if cell is None:
                return _result(check_id, False, "Could not run this check: the source of your "
                               "run_agent cell is not to be had; run that cell again.")
            try:
                return grade_level4(f"# --- answer cell l4_run_agent ---\n{cell}",
                                    [check], None)[check_id]
            except SandboxUnavailable as exc:
                return _result(check_id, False, f"Could not run this check here: {exc}.")
        save = _live(namespace, "save_checkpoint", "l2_save_checkpoint")
        agent = _live(namespace, "run_agent", "l2_run_agent")
        cells = (_source_of_cells({"l2_save_checkpoint": save, "l2_run_agent": agent})
                 if grading_problem() is None else None)
        if cells is not None:
            return _grade_level2(cells, [check], None)[check_id]
        return _run_level2(Submission.from_functions(agent, save), [check], None)[check_id]
    except LookupError as exc:
        return _result(check_id, False, f"Could not run this check: {exc}.")
    except Exception as exc:  # noqa: BLE001 - the student's kernel gets a message, not a traceback
        return _grader_fault(check_id, exc)


def in_grading_kernel() -> bool:
    """Whether this process is a kernel that grading runs a submission in.

    True under ``nbgrader autograde`` (which sets ``NBGRADER_EXECUTION=autograde``) or when
    ``CHECKPOINT_LAB_GRADING`` is ``1``. There the in-kernel self-checks run nothing: no grade
    comes from them, and the verdicts are computed outside the kernel.
    """
    return (os.environ.get(GRADING_ENV) == "1"
            or os.environ.get("NBGRADER_EXECUTION") == "autograde")


def _show(obj) -> None:
    try:
        from IPython import get_ipython
        from IPython.display import display
    except ImportError:
        get_ipython = None
    if get_ipython is not None and get_ipython() is not None:
        display(obj)
    else:
        print(obj)


class Points(float):
    """The points a visible check earned in the student's kernel, as nbgrader reads them.

    nbgrader scores a test cell by its ``execute_result``: a number there is partial credit. So
    ``nbgrader validate`` (the Validate button) reports a check that earns less than its points
    as failed, without the cell raising and stopping Run All. JupyterLab shows the HTML.
    """

    def __new__(cls, earned: float, out_of: float) -> Points:
        points = super().__new__(cls, earned)
        points.out_of = float(out_of)
        return points

    def _repr_html_(self) -> str:
        verdict = "passed" if self >= self.out_of else "not passed yet"
        return (f"<b>{self:g} of {self.out_of:g} points</b> for this check ({verdict}); "
                "grading runs it again outside this kernel.")


def _visible_scenario(check: Check) -> str:
    twin = CHECKS.get(check.id.removesuffix("_hidden"))
    return twin.scenario if twin is not None and twin.scenario else VISIBLE_SCENARIO


def run_check(check_id: str, namespace: dict) -> Points | None:
    """In a student's kernel: run check ``check_id`` on the live functions and show the result.

    A visible check runs on what ``namespace`` (pass ``globals()``) defines, shows a table
    (HTML in JupyterLab, text elsewhere) and returns the `Points` it earned, which is how
    ``nbgrader validate`` tells a failing check. A hidden check only says that it runs when the
    work is graded. The result is for the student's information: grading recomputes every
    verdict outside the kernel. Never raises for a wrong answer, and writes nothing to stderr.

    In a grading kernel (see `in_grading_kernel`) nothing runs: the verdict is computed outside
    the kernel and written into this cell's outputs instead.
    """
    if check_id not in CHECKS:
        raise KeyError(f"unknown check {check_id!r}; one of {sorted(CHECKS)}")
    check = CHECKS[check_id]
    if in_grading_kernel():
        print(f"Check {check.id} ({check.title}) is graded outside this kernel.")
        return None
    if check.hidden:
        print(f"Hidden check {check.id} ({check.points} points, {check.title}): it "
              f"{check.description}. Nothing runs here; the visible checks above show how your "
              f"code does on {_visible_scenario(check)}.")
        return None
    result = evaluate_check(check_id, namespace)
    _show(result)
    return Points(result.points_earned, check.points)
