"""The crash harness: real runs of real submissions, killed at every crash point."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest

import graders.grading.forked
import graders.inprocess.forking
import graders.inprocess.runner_backend
from fake_llm import list_scenarios, load_scenario
from graders.judge.crash_points import CrashPoint
from graders.judge.recording import Observation, Verdict
from graders.notebook import (
    Harness,
    HarnessError,
    Submission,
    crash_points,
    dry_run,
    run_matrix,
    run_point,
)

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "02_two_latent_failures"
REFERENCE = Submission.from_file(ROOT / "solutions" / "02_two_latent_failures.py")
STARTER = Submission.from_file(FIXTURES / "starter.py")
STARTER_SOURCE = (FIXTURES / "starter.py").read_text()

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the crash harness needs fork")


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


@pytest.fixture(scope="module")
def reference():
    with Harness(REFERENCE) as harness:
        yield harness


@pytest.mark.parametrize("scenario", [n for n in list_scenarios()
                                      if not load_scenario(n).parallel])
def test_the_reference_passes_every_crash_point_of_every_scenario(reference, scenario):
    """Level 2's reference, on every scenario with one call per turn (Level 4's several-call
    scenarios are tests/test_level4.py's)."""
    verdicts = reference.run_matrix(scenario)
    failed = [str(v) for v in verdicts if not v.passed]
    assert not failed, "\n".join(failed)
    kinds = {v.kind for v in verdicts}
    assert kinds == {"no_crash", "killed_during_model_call", "killed_during_tool", "torn_write",
                     "killed_before_rename"}


def test_crash_points_come_in_timeline_order(reference):
    points = reference.crash_points("support-tickets")
    assert [p.id for p in points] == [
        "killed_during_model_call_1",
        "torn_write_save_1", "killed_before_rename_save_1",
        "killed_during_tool_1",
        "torn_write_save_2", "killed_before_rename_save_2",
        "killed_during_model_call_2",
        "torn_write_save_3", "killed_before_rename_save_3",
        "killed_during_tool_2",
        "torn_write_save_4", "killed_before_rename_save_4",
        "killed_during_model_call_3",
        "no_crash",
    ]
    assert [p.step for p in points] == list(range(len(points)))
    assert points[3].label == "while tool 1 (list_tickets) ran"
    assert points[4].label == (f"after {points[4].tear_limit:,} of {points[4].tear_expected:,} "
                               "bytes of a write in save 2 (save point B, after tool 1 returned)")
    assert all(CrashPoint.from_dict(json.loads(json.dumps(p.to_dict()))) == p for p in points)


def test_the_dry_run_records_each_save_where_it_happened(reference):
    plan = reference.dry_run("support-tickets")
    assert plan.ended == "finished"
    assert [(s.phase, s.tool) for s in plan.saves] == [("A", 1), ("B", 1), ("A", 2), ("B", 2)]
    for save in plan.saves:
        assert save.completed
        assert [dst for _src, dst in save.renames] == ["checkpoint.json"]
        assert not save.in_place
        left = json.loads(save.checkpoint_text)
        assert (left["pendingToolUse"] is not None) == (save.phase == "A")
        assert save.checkpoint_bytes == len(save.checkpoint_text.encode())
    assert plan.model_calls == 3 and plan.tool_calls == 2
    assert json.loads(plan.checkpoint)["turns"] == 2


def test_run_point_says_what_was_on_disk_and_how_the_child_ended(reference):
    obs = reference.run_point("support-tickets", "killed_during_tool_2")
    assert obs.ended == "killed" and obs.kill == "tool"
    assert [e["name"] for e in obs.ledger] == ["list_tickets", "build_table"]
    assert obs.state["pendingToolUse"]["name"] == "build_table"
    assert obs.saves_done == 3
    assert obs.files == {}
    assert Observation.from_dict(json.loads(json.dumps(obs.to_dict()))) == obs


def test_run_points_runs_a_batch_in_the_order_asked(reference):
    ids = ["killed_during_tool_2", "no_crash", "torn_write_save_1"]
    observations = reference.run_points("support-tickets", ids)
    assert [o.point for o in observations] == ids
    assert [o.ended for o in observations] == ["killed", "finished", "killed"]


def test_the_module_functions_open_and_close_their_own_runner():
    plan = dry_run(REFERENCE, "support-tickets")
    assert plan.ended == "finished"
    points = crash_points(REFERENCE, "support-tickets")
    assert points[-1].id == "no_crash"
    obs = run_point(REFERENCE, "support-tickets", "torn_write_save_2")
    assert obs.ended == "killed"
    assert obs.torn["path"].startswith("checkpoint.") and obs.torn["path"].endswith(".tmp")


def test_a_torn_write_leaves_about_half_the_bytes_of_that_save():
    with Harness(STARTER) as harness:
        point = harness.point("support-tickets", "torn_write_save_1")
        obs = harness.run_point("support-tickets", point)
    assert obs.ended == "killed"
    assert obs.torn["path"] == "checkpoint.json"
    assert obs.torn["bytes_expected"] == point.tear_expected
    assert obs.checkpoint_bytes == obs.torn["bytes_on_disk"] == point.tear_limit
    assert obs.parse_error is not None


def test_kinds_select_the_crash_points_run(reference):
    verdicts = reference.run_matrix("support-tickets", kinds=["torn_write"])
    assert [v.point for v in verdicts] == [f"torn_write_save_{n}" for n in range(1, 5)]
    with pytest.raises(HarnessError, match="unknown crash point kind"):
        reference.run_matrix("support-tickets", kinds=["killed_sometime"])


def test_unknown_scenarios_and_points_are_harness_errors(reference):
    with pytest.raises(HarnessError, match="unknown scenario"):
        reference.run_matrix("no-such-scenario")
    with pytest.raises(HarnessError, match="killed_during_tool_2"):
        reference.run_point("support-tickets", "killed_during_tool_9")


def test_verdicts_are_json_data(reference):
    for v in reference.run_matrix("support-tickets", kinds=["killed_during_tool", "no_crash"]):
        assert Verdict.from_dict(json.loads(json.dumps(v.to_dict()))) == v
        assert v.scenario == "support-tickets" and v.message


# -- what a submission can do wrong ----------------------------------------------------------


HANGS = '''
import os, subprocess, sys, json
def save_checkpoint(state):
    with open("checkpoint.json", "w") as f:
        json.dump(state, f)
def run_agent(task, tools, call_model, execute_tool):
    helper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    with open(os.environ["PID_FILE"], "a") as f:
        f.write(f"{helper.pid} {os.getpid()}\\n")
    while True:
        pass
'''


def test_a_hanging_submission_is_reported_as_a_hang_and_leaves_no_process(tmp_path, monkeypatch):
    pid_file = tmp_path / "pids"
    monkeypatch.setenv("PID_FILE", str(pid_file))
    harness = Harness(Submission.from_source(HANGS, name="hangs"), timeout=0.5)
    with harness:
        start = time.monotonic()
        verdicts = harness.run_matrix("support-tickets")
        elapsed = time.monotonic() - start
        runner = harness._backend.proc
    assert [v.point for v in verdicts] == ["no_crash"]  # it hangs before any model call
    hung = verdicts[-1]
    assert not hung.passed and hung.evidence["problem"] == "hung"
    assert "still running after 0.5 s" in hung.message
    assert elapsed < 5
    pids = [int(p) for line in pid_file.read_text().split("\n") if line for p in line.split()]
    assert runner.poll() is not None
    deadline = time.monotonic() + 2
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not [p for p in pids if _alive(p)], "a process outlived the harness"
    assert not _alive(runner.pid)


@pytest.mark.parametrize(
    ("source", "phrases"),
    [
        (STARTER_SOURCE + "import os\nos._exit(3)\n",
         ["ended the process while it was being loaded", "os._exit"]),
        (STARTER_SOURCE + "import sys\nsys.exit(1)\n", ["sys.exit()"]),
        ("x = 1\nraise ValueError('top level')\n" + STARTER_SOURCE,
         ["raised ValueError: top level", "line 2 of your code", "while it was being loaded"]),
        ("def run_agent(:\n    pass\n", ["syntax error at line 1"]),
        (STARTER_SOURCE + "while True:\n    pass\n", ["still running", "never finishes"]),
        ("def run_agent(task, tools, call_model, execute_tool):\n    return {}\n",
         ["`save_checkpoint` is not defined"]),
        ("save_checkpoint = 3\ndef run_agent(*a):\n    pass\n",
         ["`save_checkpoint` is an int, not a function"]),
        ("def save_checkpoint(state):\n    pass\nasync def run_agent(*a):\n    pass\n",
         ["async def"]),
    ],
    ids=["os_exit", "sys_exit", "exception", "syntax_error", "infinite_loop", "missing",
         "not_a_function", "async"],
)
def test_a_submission_that_cannot_load_gets_one_clear_verdict(source, phrases):
    verdicts = run_matrix(Submission.from_source(source, name="broken"), "support-tickets",
                          timeout=0.5)
    assert len(verdicts) == 1
    [v] = verdicts
    assert v.point == "load" and not v.passed
    for phrase in phrases:
        assert phrase in v.message
    assert "Traceback" not in v.message
    obs = run_point(Submission.from_source(source, name="broken"), "support-tickets", "no_crash",
                    timeout=0.5)
    assert obs.ended == "not_loaded" and obs.detail == v.message


def test_an_exception_in_run_agent_names_the_line_of_the_students_code():
    source = STARTER_SOURCE.replace(
        '    response = call_model(tools=tools, messages=state["messages"])\n\n    while',
        '    response = call_model(tools=tools, messages=state["messages"])\n'
        '    response["usage"]["missing"]\n\n    while')
    assert source != STARTER_SOURCE
    [*_, v] = run_matrix(Submission.from_source(source, name="raises"), "support-tickets",
                         kinds=["no_crash"])
    assert not v.passed
    assert "raised KeyError: 'missing'" in v.message
    assert "line 22 of your code" in v.message
    assert 'response["usage"]["missing"]' in v.message


PATCHES = '''
import json as _json, os as _os, signal as _signal, sys as _sys, resource as _resource
_json.load = lambda *a, **k: {"version": 1}
_json.loads = lambda *a, **k: {"version": 1}
_os.fork = lambda: 0
_os.kill = lambda *a: None
_os.killpg = lambda *a: None
_os._exit = lambda code: None
_os.waitpid = lambda *a: (a[0], 0)
_signal.signal = lambda *a: None
_sys.addaudithook = lambda hook: None
_resource.setrlimit = lambda *a: None
'''


@pytest.mark.parametrize("cheat", [
    "import graders.inprocess.recorder as c\nc._setrlimit = lambda *a, **k: None\n",
    "import __main__\n__main__._child._setrlimit = lambda *a, **k: None\n",
    "import resource\n_real = resource.setrlimit\n"
    "def save_checkpoint(state, _save=save_checkpoint):\n"
    "    resource.setrlimit = lambda *a, **k: None\n"
    "    try:\n        _save(state)\n    finally:\n        resource.setrlimit = _real\n",
], ids=["graders_child", "main_module", "resource_in_save"])
def test_tampering_with_the_harness_does_not_make_torn_writes_pass(cheat):
    source = STARTER_SOURCE + "\n\n" + cheat
    verdicts = run_matrix(Submission.from_source(source, name="cheat"), "support-tickets",
                          kinds=["torn_write"])
    assert verdicts and not any(v.passed for v in verdicts), [str(v) for v in verdicts]


def test_patching_the_harness_modules_at_top_level_changes_no_verdict():
    honest = run_matrix(STARTER, "support-tickets")
    patched = run_matrix(Submission.from_source(STARTER_SOURCE + PATCHES, name="patched"),
                         "support-tickets")
    assert [(v.point, v.passed) for v in patched] == [(v.point, v.passed) for v in honest]
    assert not all(v.passed for v in patched)


KILLS_ITS_PARENT = STARTER_SOURCE.replace(
    "def run_agent(task, tools, call_model, execute_tool):\n",
    "def run_agent(task, tools, call_model, execute_tool):\n"
    "    import os, signal\n    os.kill(os.getppid(), signal.SIGKILL)\n")


def test_a_submission_that_kills_the_runner_gets_verdicts_not_a_harness_crash():
    verdicts = run_matrix(Submission.from_source(KILLS_ITS_PARENT, name="kills"),
                          "support-tickets")
    assert verdicts and not any(v.passed for v in verdicts)
    assert "kill its parent process" in verdicts[-1].message


SHORT_WRITE = (FIXTURES / "passes_os_write.py").read_text().replace(
    "        view = memoryview(data)\n        while view:\n"
    "            view = view[os.write(fd, view):]",
    "        os.write(fd, data)")


def test_a_save_that_ignores_a_short_write_is_caught_by_the_torn_write():
    assert "os.write(fd, data)" in SHORT_WRITE
    verdicts = run_matrix(Submission.from_source(SHORT_WRITE, name="short"), "support-tickets",
                          kinds=["torn_write"])
    assert verdicts and not any(v.passed for v in verdicts)
    assert all(v.evidence["problem"] == "partial_write" for v in verdicts)
    assert "os.write may write fewer bytes than it was given" in verdicts[0].message


NEVER_SAVES = STARTER_SOURCE.replace("        save_checkpoint(state)\n", "")


def test_a_loop_that_never_saves_is_told_so():
    verdicts = run_matrix(Submission.from_source(NEVER_SAVES, name="never"), "support-tickets")
    by_point = {v.point: v for v in verdicts}
    assert "never called save_checkpoint" in by_point["killed_during_tool_1"].message


def test_what_the_submission_prints_is_kept_apart_from_the_harness():
    source = STARTER_SOURCE.replace("    with open(", "    print('saving', flush=True)\n"
                                    "    print('to stderr', file=__import__('sys').stderr)\n"
                                    "    with open(")
    with Harness(Submission.from_source(source, name="prints")) as harness:
        obs = harness.run_point("support-tickets", "killed_during_model_call_3")
        assert obs.stdout_tail == "saving\nsaving\n"
        assert obs.stderr_tail == "to stderr\nto stderr\n"
        assert [v.passed for v in harness.run_matrix("support-tickets")] == [
            v.passed for v in run_matrix(STARTER, "support-tickets")]


# -- in-process mode and other platforms -----------------------------------------------------


def _load_functions(path: Path) -> dict:
    namespace: dict = {"__name__": path.stem}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    return namespace


def test_in_process_mode_forks_from_this_process_and_agrees_with_the_runner():
    ref = _load_functions(ROOT / "solutions" / "02_two_latent_failures.py")
    verdicts = run_matrix(Submission.from_functions(ref["run_agent"], ref["save_checkpoint"]),
                          "support-tickets")
    assert verdicts and all(v.passed for v in verdicts)
    starter = _load_functions(FIXTURES / "starter.py")
    in_process = run_matrix(
        Submission.from_functions(starter["run_agent"], starter["save_checkpoint"]),
        "support-tickets")
    assert [(v.point, v.passed, v.message) for v in in_process] == [
        (v.point, v.passed, v.message) for v in run_matrix(STARTER, "support-tickets")]
    assert ref["save_checkpoint"].__name__ == "save_checkpoint"
    assert ref["save_checkpoint"] is ref["run_agent"].__globals__["save_checkpoint"]


def _no_fork(monkeypatch, reason: str = "no fork") -> None:
    """This platform, as one without fork: for the forking observer and the grading layer."""
    for module in (graders.grading.forked, graders.inprocess.forking):
        monkeypatch.setattr(module, "unsupported_reason", lambda: reason)
    monkeypatch.setattr(graders.grading.forked, "_told", [])


def test_without_fork_live_functions_are_skipped_with_a_clear_message(monkeypatch):
    reason = "The crash harness needs Linux or macOS: nothing was run."
    _no_fork(monkeypatch, reason)
    ref = _load_functions(ROOT / "solutions" / "02_two_latent_failures.py")
    live = Submission.from_functions(ref["run_agent"], ref["save_checkpoint"])
    [v] = run_matrix(live, "support-tickets")
    assert v.skipped and not v.passed and v.message == reason
    obs = run_point(live, "support-tickets", "killed_during_tool_1")
    assert obs.ended == "skipped" and obs.detail == reason
    assert [p.id for p in crash_points(live, "support-tickets")] == ["no_crash"]


def test_without_fork_a_source_is_recorded_and_replayed_and_says_so_once(monkeypatch, capsys):
    from graders.grading.recorded import RecordedHarness

    _no_fork(monkeypatch)
    with Harness(STARTER) as harness, Harness(REFERENCE) as reference:
        assert isinstance(harness, RecordedHarness)
        obs = harness.run_point("support-tickets", "killed_during_tool_2")
        assert obs.ended == "killed" and obs.checkpoint is not None
        replayed = harness.run_matrix("support-tickets")
        assert all(v.passed for v in reference.run_matrix("support-tickets"))
    said = capsys.readouterr().out
    assert said.count("No fork here") == 1 and len(said.splitlines()) == 1
    monkeypatch.undo()
    assert [(v.point, v.passed) for v in replayed] == [
        (v.point, v.passed) for v in run_matrix(STARTER, "support-tickets")]
    killed = run_point(STARTER, "support-tickets", "killed_during_tool_2")
    assert obs.checkpoint == killed.checkpoint


def test_the_runner_starts_without_site_and_finds_both_packages(tmp_path):
    """Start the runner as the harness does (python -S, PYTHONPATH from runner_path) from a
    folder that is not the checkout, and have it import both packages."""
    import subprocess

    env = dict(os.environ, PYTHONPATH=graders.inprocess.runner_backend.runner_path(),
               PYTHONDONTWRITEBYTECODE="1")
    env.pop("PYTHONSTARTUP", None)
    proc = subprocess.run(
        [sys.executable, "-S", "-c", "import sys, fake_llm, graders.inprocess.runner; "
         "print('site' in sys.modules, fake_llm.__file__, graders.inprocess.runner.__file__)"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    site_loaded, fake_llm_file, runner_file = proc.stdout.split()
    assert site_loaded == "False"
    assert fake_llm_file.startswith(str(ROOT)) and runner_file.startswith(str(ROOT))


def test_a_submission_knows_what_it_is_before_it_runs(tmp_path):
    sub = Submission.from_file(FIXTURES / "fails_atomic_in_place_write.py")
    assert sub.name == "fails_atomic_in_place_write"
    assert sub.filename.endswith("fails_atomic_in_place_write.py")
    assert sub.problem() is None and not sub.in_process
    assert "syntax error at line 1" in Submission.from_source("def f(:\n").problem()
    assert "`run_agent` is not defined" in Submission.from_source(
        "def save_checkpoint(state):\n    pass\n").problem()
    assert Submission.from_source("from somewhere import *\n").problem() is None
    with pytest.raises(TypeError):
        Submission.from_functions(None, None)


def _lesson_view(obs) -> tuple:
    return (obs.checkpoint, sorted(obs.files.values()), len(obs.saves), obs.model_calls,
            obs.tool_calls, [e.get("name") for e in obs.ledger])


def test_without_fork_the_lessons_crash_runs_and_timeline_show_what_real_kills_leave(
        monkeypatch, capsys):
    """The crash runs the lessons show (lessons/*.py: Harness(...).run_point), and the
    timeline, are the same from a recording where there is no fork."""
    from graders.teaching.timeline import build_timeline
    from graders.teaching.variants import no_checkpoint, variant

    runs = [(no_checkpoint(), "support-tickets", "killed_during_tool_2"),
            (variant("A and B", "temp + rename"), "support-tickets", "killed_during_model_call_2"),
            (variant("A and B", "temp + rename"), "long-migration", "killed_during_tool_4"),
            (variant("B only", "in place"), "support-tickets", "torn_write_save_2"),
            (variant("B only", "temp + rename"), "support-tickets", "torn_write_save_2"),
            (variant("B only", "temp + rename"), "support-tickets", "killed_before_rename_save_2")]

    def shown():
        views = []
        for submission, scenario, point in runs:
            with Harness(submission) as harness:
                views.append(_lesson_view(harness.run_point(scenario, point)))
        return views, build_timeline().to_text()

    killed = shown()
    _no_fork(monkeypatch)
    assert shown() == killed
    assert capsys.readouterr().out.count("No fork here") == 1
