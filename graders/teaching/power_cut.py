"""Power cuts, shown from the engine that grades Level 3 (:mod:`graders.judge.power`).

- Lesson 04's table (:func:`power_cut_table`): four saves (no fsync, the file's only, the
  folder's only, both) run for real in the grader's sandbox, and every state a power cut while
  tool 2 runs could leave. Where the sandbox cannot run, each save runs once in this process under
  the in-process recorder (:mod:`graders.inprocess.record`), whose recording the same engine
  replays; the table says so in one line.
- Level 3's puzzle (:func:`compare_saves`): four saves with their syncs in the wrong places (or
  missing), :data:`LEVEL3_SAVES`, graded by Level 3's checks. :func:`show_saves` shows what each
  does, step by step in words, until the student's eight predictions are in the saved notebook
  (the gate of Level 3's checks), and their code after. The student first fills a table of
  what each can lose; the comparison shows nothing until every cell is filled. Where the sandbox
  is missing it shows :data:`KNOWN_OUTCOMES`, which a test holds equal to a real run.
"""

from __future__ import annotations

import html
import textwrap
from dataclasses import dataclass

__all__ = ["SAVES", "PowerRow", "power_cut_rows", "power_cut_table", "LEVEL3_SAVES",
           "KNOWN_OUTCOMES", "SaveOutcome", "save_outcomes", "save_steps", "show_saves",
           "compare_saves"]

_HEAD = '''import json, os, tempfile

def save_checkpoint(state):
    fd, tmp = tempfile.mkstemp(dir=".", suffix=".tmp")
    with os.fdopen(fd, "w") as f:
        json.dump(state, f)
'''
_FILE_SYNC = '''        f.flush()
        os.fsync(f.fileno())
'''
_RENAME = '''    os.replace(tmp, "checkpoint.json")
'''
_DIR_SYNC = '''    folder = os.open(".", os.O_RDONLY)
    os.fsync(folder)
    os.close(folder)
'''

#: The four saves the lesson compares, by name.
SAVES = {
    "no fsync": _HEAD + _RENAME,
    "the file only": _HEAD + _FILE_SYNC + _RENAME,
    "the folder only": _HEAD + _RENAME + _DIR_SYNC,
    "both": _HEAD + _FILE_SYNC + _RENAME + _DIR_SYNC,
}

_LOOP = '''

def run_agent(task, tools, call_model, execute_tool):
    state = {"version": 1, "task": task, "turns": 0, "tokensUsed": 0,
             "messages": [{"role": "user", "content": task}], "pendingToolUse": None}
    response = call_model(tools=tools, messages=state["messages"])
    while response["stop_reason"] == "tool_use":
        state["messages"].append({"role": "assistant", "content": response["content"]})
        block = next(b for b in response["content"] if b["type"] == "tool_use")
        state["pendingToolUse"] = {"id": block["id"], "name": block["name"],
                                   "input": block["input"]}
        save_checkpoint(state)
        result = execute_tool(block["name"], block["input"])
        state["messages"].append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": block["id"], "content": result}]})
        state["turns"] += 1
        state["pendingToolUse"] = None
        save_checkpoint(state)
        response = call_model(tools=tools, messages=state["messages"])
    return state
'''


@dataclass
class PowerRow:
    """One save: what a power cut while tool 2 runs could leave, and whether resume copes."""

    save: str
    states: list[str]
    ok: bool


def _words(state, good: bytes | None) -> str:
    if state.kind == "absent":
        return "no checkpoint.json"
    if state.kind != "file":
        return f"a {state.kind}"
    if state.cause is None:
        return "the save A made before tool 2 (complete)"
    if state.cause == "rename":
        return "an older save: the rename was undone"
    if not state.data:
        return "an empty file: the bytes never reached the disk"
    if state.variant == "zeroed":
        return "zero bytes where a save was"
    return "part of a save's bytes"


def power_cut_rows(scenario: str = "support-tickets",
                   saves: dict[str, str] | None = None) -> list[PowerRow]:
    """For each of ``saves`` (:data:`SAVES` by default: name -> the source of a
    ``save_checkpoint``), the states a power cut while tool 2 runs could leave."""
    from fake_llm import load_scenario
    from graders.judge.checkpoint_rules import check
    from graders.judge.matrix import build_matrix
    from graders.judge.power import judge_power_states

    sc = load_scenario(scenario)
    saves = SAVES if saves is None else saves
    rows = []
    for name, recorded in zip(saves, _records([save + _LOOP for save in saves.values()], sc),
                              strict=True):
        matrix = build_matrix(recorded, sc)
        pm = next(p for p in matrix.points if p.point.id == "killed_during_tool_2")
        judged = judge_power_states(matrix, pm, sc, check)
        good = judged[0][0].data if judged else None
        rows.append(PowerRow(name, list(dict.fromkeys(_words(s, good) for s, _ in judged)),
                             all(passed for _, passed in judged)))
    return rows


def _records(sources: list[str], sc) -> list:
    """One recorded run of each of ``sources``: in the grader's sandbox, side by side (each
    waits on its own sandbox), or where there is none, one after another in this process under
    the in-process recorder."""
    from graders.sandbox import record, sandbox_problem

    if sandbox_problem() is None:
        from graders.parallel import side_by_side

        return side_by_side(lambda source: record(source, sc), sources)
    from graders.inprocess.record import record_in_process

    return [record_in_process(source, sc) for source in sources]


#: The line the table shows where the saves ran under the in-process recorder.
RECORDED_HERE = ("The four saves ran in this process, their file operations recorded (there is "
                 "no sandbox here); the power-cut states are built from those records, as "
                 "grading builds them.")


def power_cut_table(scenario: str = "support-tickets", saves: dict[str, str] | None = None):
    """The four saves (or ``saves``) side by side, as HTML in JupyterLab (text elsewhere)."""
    from graders.sandbox import sandbox_problem

    note = RECORDED_HERE if sandbox_problem() else None
    rows = power_cut_rows(scenario, saves)
    text = "\n".join(f"{r.save:16} {'resume copes' if r.ok else 'LOST':12} "
                     + "; ".join(r.states) for r in rows)
    if note:
        text = f"{note}\n{text}"
    cells = "".join(
        f"<tr><th scope='row' style='text-align:left;padding:4px 8px'>{html.escape(r.save)}</th>"
        f"<td style='padding:4px 8px'>{'<br>'.join(html.escape(s) for s in r.states)}</td>"
        f"<td style='padding:4px 8px;font-weight:600'>"
        f"{'resume copes' if r.ok else 'a save the loop relied on is lost'}</td></tr>"
        for r in rows)
    markup = ((f"<p>{html.escape(note)}</p>" if note else "")
              + "<table class='checkpoint-lab-power-cut' style='border-collapse:collapse'>"
              "<caption style='text-align:left'>A power cut while tool 2 runs: what "
              "checkpoint.json could be</caption><thead><tr><th scope='col'>fsync of</th>"
              "<th scope='col'>checkpoint.json after the power cut</th>"
              f"<th scope='col'>resume</th></tr></thead><tbody>{cells}</tbody></table>")
    return _Shown(text, markup)


class _Shown:
    def __init__(self, text: str, markup: str | None) -> None:
        self.text, self.markup = text, markup

    def __repr__(self) -> str:
        return self.text

    def _repr_html_(self) -> str | None:
        return self.markup


# -- Level 3's puzzle: four saves, what can each lose? ----------------------------------------

_L3_HEAD = '''import json
import os
import tempfile

CHECKPOINT = "checkpoint.json"


def save_checkpoint(state):
    directory = os.path.dirname(os.path.abspath(CHECKPOINT))
    fd, tmp_path = tempfile.mkstemp(dir=directory, prefix="checkpoint.", suffix=".tmp")
'''

#: Level 3's four saves, by name. Save 1 is the exercise's starter; save 2 is Level 2's atomic
#: save as the reference wrote it. None of them survives every power cut, and no two of them
#: put together are the answer: none syncs the folder after its rename (issue 30, G4).
LEVEL3_SAVES = {
    "save 1": _L3_HEAD + '''    folder = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(state, f)
        f.flush()
        os.fsync(folder)
        os.replace(tmp_path, CHECKPOINT)
        os.fsync(f.fileno())
    os.close(folder)
''',
    "save 2": _L3_HEAD + '''    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(state, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp_path, CHECKPOINT)
''',
    "save 3": _L3_HEAD + '''    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(state, f)
        os.fsync(f.fileno())
    folder = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    os.fsync(folder)
    os.close(folder)
    os.replace(tmp_path, CHECKPOINT)
''',
    "save 4": _L3_HEAD + '''    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(state, f)
        f.flush()
        os.fsync(f.fileno())
    folder = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    os.fsync(folder)
    os.close(folder)
    os.replace(tmp_path, CHECKPOINT)
''',
}

#: The two columns of the table: what a power cut at some moment of the run can leave.
COLUMNS = {
    "empty": "checkpoint.json empty or cut short",
    "older": "a save the loop relied on missing (no file, or an older save) after a tool ran",
}


@dataclass
class SaveOutcome:
    """What power cuts at every moment of one run can do to one save: ``empty`` and ``older``
    as in :data:`COLUMNS`, and the first moment at which each happens ("" where it never does)."""

    save: str
    empty: bool
    older: bool
    empty_at: str = ""
    older_at: str = ""


#: What Level 3's checks find for each save on support-tickets (a test holds it to a real run).
KNOWN_OUTCOMES = {
    "save 1": SaveOutcome("save 1", True, True, "power_cut_in_save_1", "power_cut_during_tool_1"),
    "save 2": SaveOutcome("save 2", False, True, "", "power_cut_during_tool_1"),
    "save 3": SaveOutcome("save 3", True, True, "power_cut_during_tool_1",
                          "power_cut_during_tool_1"),
    "save 4": SaveOutcome("save 4", False, True, "", "power_cut_during_tool_1"),
}


def save_outcomes() -> dict[str, SaveOutcome]:
    """Each of :data:`LEVEL3_SAVES` graded by Level 3's visible checks, in the sandbox."""
    from graders.checks import grade_submission
    from graders.checks.counting import counts_against

    outcomes = {}
    for name, code in LEVEL3_SAVES.items():
        results = grade_submission(f"# --- answer cell l3_save_checkpoint ---\n{code}",
                                   "03_power_cut", include_hidden=False)
        failed = {check_id: [v.point for v in r.verdicts if counts_against(check_id, v)]
                  for check_id, r in results.items()}
        empty, older = failed["l3_file_synced"], failed["l3_directory_synced"]
        outcomes[name] = SaveOutcome(name, bool(empty), bool(older),
                                     empty[0] if empty else "", older[0] if older else "")
    return outcomes


#: What each line of :data:`LEVEL3_SAVES` after the shared head does, in the lesson's words (None:
#: a line that only opens or closes the folder for its sync). Leaving the ``with`` block closes
#: the file, which hands Python's buffer to the operating system.
_STEP_WORDS = {
    "folder = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)": None,
    'with os.fdopen(fd, "w", encoding="utf-8") as f:': None,
    "json.dump(state, f)": "write the state",
    "f.flush()": "flush",
    "os.fsync(f.fileno())": "sync the file",
    "os.fsync(folder)": "sync the folder",
    "os.replace(tmp_path, CHECKPOINT)": "rename",
    "os.close(folder)": None,
}
_CLOSE = "close the file"

#: What `show_saves` says above the steps while the predictions are not in yet.
STEPS_HEAD = ("All four write the state to a temp file in checkpoint.json's folder and rename it "
              "over checkpoint.json. What each does, in order:")


def save_steps(code: str) -> list[str]:
    """What one of :data:`LEVEL3_SAVES` does after the shared head, step by step in the lesson's
    words: the order of its writes, syncs and rename, not the calls that make them."""
    steps, in_file = [], False
    for line in code[len(_L3_HEAD):].splitlines():
        indent = len(line) - len(line.lstrip())
        if in_file and indent <= 4:
            steps.append(_CLOSE)
            in_file = False
        words = _STEP_WORDS[line.strip()]
        in_file = in_file or line.strip().startswith("with os.fdopen(")
        if words:
            steps.append(words)
    return steps + [_CLOSE] * in_file


def _predictions_in(namespace: dict | None) -> bool:
    from graders.checks.gate import gate_open, saved_notebook

    return gate_open("03_power_cut", saved_notebook("03_power_cut", namespace))


def show_saves(namespace: dict | None = None):
    """Level 3's four saves. Until the eight predictions are in the saved notebook (the gate of
    Level 3's checks, :mod:`graders.checks.gate`), what each does, step by step, in words; then
    their code (whole lines, any theme): the lines all four begin with once, then what each does
    after them. ``namespace``: the notebook's ``globals()``, which name its file."""
    from graders.teaching.code_view import show_code

    if not _predictions_in(namespace):
        return _steps_view()
    head = _L3_HEAD.split(chr(10) * 3, 1)[1]
    bodies = [f"# ---- {name}: then ----\n{code[len(_L3_HEAD):].rstrip()}"
              for name, code in LEVEL3_SAVES.items()]
    text = "\n".join([f"# ---- all four begin ----\n{head.rstrip()}", *bodies])
    return show_code(text, language="python")


def _steps_view() -> _Shown:
    later = ("Their code appears here once all eight predictions in PREDICTED are filled in and "
             "the notebook is saved (Ctrl+S); then run this cell again.")
    steps = {name: save_steps(code) for name, code in LEVEL3_SAVES.items()}
    text = "\n".join([textwrap.fill(STEPS_HEAD, 100),
                      *(f"{name}: {', '.join(s)}" for name, s in steps.items()),
                      textwrap.fill(later, 100)])
    rows = "".join(f"<tr><th scope='row' style='text-align:left;padding:2px 8px'>"
                   f"{html.escape(name)}</th><td style='padding:2px 8px'>"
                   f"{' &rarr; '.join(html.escape(step) for step in s)}</td></tr>"
                   for name, s in steps.items())
    markup = (f"<p>{html.escape(STEPS_HEAD)}</p><table class='cl-level3-steps'><tbody>{rows}"
              f"</tbody></table><p>{html.escape(later)}</p>")
    return _Shown(text, markup)


def _unfilled(table) -> list[str]:
    if not isinstance(table, dict):
        return list(LEVEL3_SAVES)
    missing = []
    for name in LEVEL3_SAVES:
        row = table.get(name)
        if not (isinstance(row, dict) and all(isinstance(row.get(c), bool) for c in COLUMNS)):
            missing.append(name)
    return missing


def compare_saves(table) -> _Shown:
    """The student's table beside what power cuts really leave, once every cell is filled.

    ``table`` is ``{"save 1": {"empty": bool, "older": bool}, ...}``. Until all eight cells hold
    True or False nothing is revealed.
    """
    missing = _unfilled(table)
    if missing:
        return _Shown("Fill in every cell first (True or False): " + ", ".join(missing)
                      + " not yet. Nothing is shown until you have committed to all eight.", None)
    from graders.sandbox import sandbox_problem

    problem = sandbox_problem()
    outcomes = KNOWN_OUTCOMES if problem else save_outcomes()
    note = (f"(The grader's sandbox is not here ({problem}): these are the outcomes it found "
            "on Linux.)" if problem else
            "Each save ran for real with the given loop, and the engine that grades Level 3 "
            "cut the power at every moment of the run.")
    right = sum(table[n][c] == getattr(o, c) for n, o in outcomes.items() for c in COLUMNS)
    lines, rows = [], []
    for name, outcome in outcomes.items():
        cells = []
        for column in COLUMNS:
            real, mine = getattr(outcome, column), table[name][column]
            at = getattr(outcome, f"{column}_at")
            truth = f"yes (first at {at})" if real else "no"
            cells.append((mine, truth, mine == real))
        lines.append(f"{name}: " + "; ".join(
            f"{column}: you said {'yes' if mine else 'no'}, really {truth}"
            + ("" if ok else " <- not what you predicted")
            for column, (mine, truth, ok) in zip(COLUMNS, cells, strict=True)))
        rows.append(f"<tr><th scope='row'>{html.escape(name)}</th>" + "".join(
            f"<td>you said {'yes' if mine else 'no'}; really <b>{html.escape(truth)}</b>"
            f"{'' if ok else ' &#10007;'}</td>" for mine, truth, ok in cells) + "</tr>")
    head = f"You predicted {right} of {len(COLUMNS) * len(outcomes)} cells right. {note}"
    markup = (f"<p>{html.escape(head)}</p><table class='cl-level3-saves'><thead><tr>"
              "<th scope='col'>save</th>"
              + "".join(f"<th scope='col'>{html.escape(t)}</th>" for t in COLUMNS.values())
              + "</tr></thead><tbody>" + "".join(rows) + "</tbody></table>")
    return _Shown("\n".join([head, *lines]), markup)
