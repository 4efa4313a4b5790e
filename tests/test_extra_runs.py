"""Runs beside the recorded one, graded through the sandbox as grading does: a restart in the
folder a kill left, and a disk that fills during a save (Level 2's atomic-save checks)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from functools import cache

import pytest

from graders.checks import grade_submission
from graders.checks.two_latent_failures import ATOMIC_KINDS
from graders.grading.recorded import TracedHarness
from graders.sandbox.fill_disk import limit_file_size
from graders.submission import Submission
from tests.conftest import ROOT

L2 = ROOT / "tests" / "fixtures" / "02_two_latent_failures"

pytestmark = [pytest.mark.sandbox, pytest.mark.usefixtures("sandbox_here")]


@cache
def verdicts(path: str, scenario: str = "support-tickets") -> dict:
    """Point id -> verdict of the atomic-save kinds, restarts and the full disk included."""
    harness = TracedHarness(Submission.from_source((ROOT / path).read_text(), name="x"))
    return {v.point: v for v in harness.run_matrix(scenario, {"no_crash", *ATOMIC_KINDS})}


def of_kind(found: dict, kind: str) -> list:
    return [v for v in found.values() if v.kind == kind]


# -- crash, then restart ----------------------------------------------------------------------

@pytest.mark.parametrize("path", [
    "solutions/02_two_latent_failures.py",
    "tests/fixtures/02_two_latent_failures/passes_os_write.py",
    "tests/fixtures/02_two_latent_failures/adversarial/passes_os_write_loop.py",
])
def test_a_correct_save_survives_a_restart_among_what_a_kill_left(path):
    restarts = of_kind(verdicts(path), "restart")
    assert restarts, "a kill inside a save leaves a temp file: at least one restart"
    assert all(v.passed for v in restarts), [v.message for v in restarts if not v.passed]
    assert "the next run saved and finished the task" in restarts[0].message


@pytest.mark.parametrize(("name", "said"), [
    ("fails_atomic_fixed_temp_appended.py", "that are not valid JSON (Extra data"),
    ("fails_atomic_fixed_temp_exclusive.py", "raised FileExistsError"),
    ("fails_atomic_pid_temp_exclusive.py", "raised FileExistsError"),
])
def test_a_save_a_leftover_breaks_fails_the_atomic_save_after_a_restart(name, said):
    found = verdicts(f"tests/fixtures/02_two_latent_failures/adversarial/{name}")
    one_shot = [v for v in found.values() if v.kind in ("torn_write", "killed_before_rename")]
    assert one_shot and all(v.passed for v in one_shot), "every kill alone leaves a good save"
    failed = [v for v in of_kind(found, "restart") if not v.passed]
    assert failed, "the restart in the folder the kill left catches it"
    assert said in failed[0].message
    assert "left in the folder, then restarted there" in failed[0].message
    assert "Traceback" not in failed[0].message


def test_a_leftover_named_after_the_killed_process_is_named_after_the_restarted_one():
    """A restart may get the id the killed process had (in a container, in the bubblewrap
    tier's PID namespace), or not (the uid tier has no PID namespace): the bootstrap names a
    leftover the judge marked as made from the killed id after its own id, so that every tier
    restarts into the folder a restart with the same id would find."""
    import base64

    from fake_llm import load_scenario
    from graders.sandbox import record

    source = ("import os\n\ndef save_checkpoint(state):\n    pass\n\n"
              "def run_agent(task, tools, call_model, execute_tool):\n"
              "    raise RuntimeError(f'{os.getpid()} {sorted(os.listdir())}')\n")
    data = base64.b64encode(b"{}").decode()
    rec = record(source, load_scenario("support-tickets"), seed=[
        {"path": "/work/checkpoint.json.99999.tmp", "kind": "file", "data": data,
         "named_after_pid": 99999},
        {"path": "/work/keep.99999", "kind": "file", "data": data}])
    said = rec.error["message"]
    pid = said.split()[0]
    assert f"'checkpoint.json.{pid}.tmp'" in said and "'keep.99999'" in said, said


def test_restarts_cost_one_run_per_distinct_set_of_leftovers_not_per_crash_state():
    """The reference leaves a temp file of another name in every save (mkstemp): one restart
    on the short task as on the long."""
    short = verdicts("solutions/02_two_latent_failures.py")
    long = verdicts("solutions/02_two_latent_failures.py", "long-migration")
    assert len(of_kind(short, "restart")) == len(of_kind(long, "restart")) == 1
    states = [v for v in long.values() if v.kind in ("torn_write", "killed_before_rename")]
    assert sum(v.evidence["moments"] for v in states) > 10 * 2


def test_a_restart_failure_costs_the_atomic_save_and_not_save_point_a():
    source = (L2 / "adversarial" / "fails_atomic_fixed_temp_appended.py").read_text()
    results = grade_submission(source, "02_two_latent_failures")
    assert {k: r.passed for k, r in results.items()} == {
        "l2_atomic_save": False, "l2_save_point_a": True, "l2_atomic_save_hidden": False,
        "l2_save_point_a_hidden": True}
    assert "restarts after a kill that left files behind" in results["l2_atomic_save"].message


# -- a full disk ------------------------------------------------------------------------------

def test_a_save_that_ignores_a_short_write_loses_the_checkpoint_when_the_disk_fills():
    found = verdicts(
        "tests/fixtures/02_two_latent_failures/adversarial/fails_atomic_short_write_full_disk.py")
    assert all(v.passed for v in found.values() if v.kind != "disk_full"), \
        "no kill shows it: every write is whole until the disk fills"
    [full] = of_kind(found, "disk_full")
    assert not full.passed and full.point == "disk_full_after_tool_1"
    assert "not valid JSON" in full.message and "resume would find nothing" in full.message


@pytest.mark.parametrize("path", [
    "solutions/02_two_latent_failures.py",
    "tests/fixtures/02_two_latent_failures/passes_os_write.py",
])
def test_a_correct_save_keeps_the_previous_checkpoint_when_the_disk_fills(path):
    [full] = of_kind(verdicts(path), "disk_full")
    assert full.passed, full.message
    assert "raised OSError" in full.message and "File too large" in full.message


def test_an_in_place_save_is_torn_by_a_full_disk():
    [full] = of_kind(verdicts("tests/fixtures/02_two_latent_failures/starter.py"), "disk_full")
    assert not full.passed and "not valid JSON" in full.message


_WRITER = """
import json, os, sys
sys.stdout.write("ready\\n"); sys.stdout.flush()
sys.stdin.readline()
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
first = os.write(fd, b"x" * 100_000)
try:
    os.write(fd, b"x")
    second = "wrote"
except OSError as err:
    second = err.errno
print(json.dumps([first, second]))
"""


def test_the_disk_fills_from_outside_with_no_namespace_and_no_privilege():
    """No tmpfs, no namespace, no CAP_SYS_RESOURCE (this machine's root has none, as Docker's
    has none): a process of another user, below the one named, gets its file-size limit lowered
    from outside, and its next write is cut short, then fails (EFBIG), as on a full disk."""
    import errno
    import shutil
    import tempfile
    from pathlib import Path

    folder = Path(tempfile.mkdtemp(prefix="checkpoint-lab-fill-"))  # the writer's user reaches it
    folder.chmod(0o777)
    target = folder / "big"
    writer = [sys.executable, "-I", "-c", _WRITER, str(target)]
    if os.geteuid() == 0:
        writer = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--", *writer]
    parent = subprocess.Popen(["sh", "-c", '"$@"; exit $?', "sh", *writer],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout.readline() == "ready\n"
        seen, error = limit_file_size(parent.pid, 1000)
        assert error == "" and seen >= 1
        parent.stdin.write("go\n")
        parent.stdin.flush()
        first, second = json.loads(parent.stdout.readline())
        size = target.stat().st_size
    finally:
        parent.kill()
        parent.wait()
        shutil.rmtree(folder, ignore_errors=True)
    assert first == 1000, "the write that crosses the limit writes what fits"
    assert second == errno.EFBIG, "and the next one fails"
    assert size == 1000
