"""Lesson 04's power-cut table: the four saves (no fsync, the file's only, the folder's only,
both) run for real in the grader's sandbox, and every state a power cut could leave while the
first tool runs, from the same engine that grades Level 3 (:mod:`graders.judge.power`).

Where the sandbox cannot run (no Linux strace and bubblewrap), each save runs once in this
process under the in-process recorder (:mod:`graders.inprocess.record`), whose recording the
same engine replays; the table says so in one line.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

__all__ = ["SAVES", "PowerRow", "power_cut_rows", "power_cut_table"]

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


def power_cut_rows(scenario: str = "support-tickets") -> list[PowerRow]:
    """For each of :data:`SAVES`, the states a power cut while tool 2 runs could leave."""
    from fake_llm import load_scenario
    from graders.judge.checkpoint_rules import check
    from graders.judge.matrix import build_matrix
    from graders.judge.power import _power_point, _state_observation, power_moments

    sc = load_scenario(scenario)
    rows = []
    for name, save in SAVES.items():
        matrix = build_matrix(_record(save + _LOOP, sc), sc)
        pm = next(p for p in matrix.points if p.point.id == "killed_during_tool_2")
        moment = pm.moments[0]
        [pw] = [p for p in power_moments([moment], matrix.ops)]
        point = _power_point(pm.point)
        good = pw.states[0].data if pw.states else None
        ok = all(check(_state_observation(matrix, pm, moment, point, s), sc, point).passed
                 for s in pw.states)
        rows.append(PowerRow(name, list(dict.fromkeys(_words(s, good) for s in pw.states)), ok))
    return rows


def _record(source: str, sc):
    """One recorded run of ``source``: in the grader's sandbox, or where there is none, in this
    process under the in-process recorder."""
    from graders.sandbox import record, sandbox_problem

    if sandbox_problem() is None:
        return record(source, sc)
    from graders.inprocess.record import record_in_process

    return record_in_process(source, sc)


#: The line the table shows where the saves ran under the in-process recorder.
RECORDED_HERE = ("The four saves ran in this process, their file operations recorded (there is "
                 "no sandbox here); the power-cut states are built from those records, as "
                 "grading builds them.")


def power_cut_table(scenario: str = "support-tickets"):
    """The four saves side by side, as HTML in JupyterLab (text elsewhere)."""
    from graders.sandbox import sandbox_problem

    note = RECORDED_HERE if sandbox_problem() else None
    rows = power_cut_rows(scenario)
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
