"""Where no sandbox tier can run, grading refuses in one line and a self-check says what it did;
as root without bubblewrap, grading runs in the uid tier.

The pod (uid 1000, no user namespaces) is simulated for real (``tests.conftest.pod``, the recipe
of issue 17), and the grader runs there as a program: nothing is mocked but the missing
bubblewrap where the uid tier must refuse; Docker's default profile is simulated too
(``tests.conftest.docker_root``), where with CAP_SYS_PTRACE strace observes as root.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import graders.sandbox.box as box
from tests.conftest import DOCKER_CAPS, ROOT, contained, docker_root, pod

pytestmark = pytest.mark.sandbox

if os.geteuid() != 0:
    pytest.skip("the simulations of a pod need root", allow_module_level=True)


def in_pod(*args: str, bwrap: bool = True) -> subprocess.CompletedProcess:
    """``python args...`` in a simulated JupyterHub pod, from a folder its uid may write."""
    with tempfile.TemporaryDirectory() as scratch:
        os.chmod(scratch, 0o777)
        env = dict(os.environ, HOME=scratch, PYTHONPATH=str(ROOT))
        return subprocess.run(pod(sys.executable, *args, bwrap=bwrap), capture_output=True,
                              text=True, cwd=scratch, env=env, timeout=600)


def test_grade_refuses_in_a_pod_in_one_line_naming_no_sandbox_and_gradescope():
    done = in_pod("-m", "graders.cli", "grade", "/nowhere", "--course", "/nowhere",
                  "--csv", "/nowhere/g.csv")
    err = done.stderr.strip()
    assert done.returncode == 2, done.stdout + err
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert "--no-sandbox" in err and "Gradescope" in err and "not root" in err


def test_grade_refuses_without_bubblewrap_naming_what_to_install():
    done = in_pod("-m", "graders.cli", "grade", "/nowhere", "--course", "/nowhere",
                  "--csv", "/nowhere/g.csv", bwrap=False)
    err = done.stderr.strip()
    assert done.returncode == 2 and len(err.splitlines()) == 1, err
    assert "bubblewrap" in err and "--no-sandbox" in err


_GRADE_IN_POD = """
import json, sys
from graders.checks import grade_submission
results = grade_submission(open(sys.argv[1]).read(), "02_two_latent_failures",
                           include_hidden=False)
print(json.dumps({k: [r.passed, r.message] for k, r in results.items()}))
"""


def test_grading_in_a_pod_fails_every_check_saying_why():
    done = in_pod("-c", _GRADE_IN_POD, str(ROOT / "solutions" / "02_two_latent_failures.py"))
    assert done.returncode == 0, done.stderr[-2000:]
    results = json.loads(done.stdout.strip().splitlines()[-1])
    for passed, message in results.values():
        assert not passed
        assert "Could not grade this check on this machine" in message
        assert "--no-sandbox" in message


_SELF_CHECK_IN_POD = """
import sys
from graders.checks import evaluate_check
from graders.grading.observers import NOTES, observer
namespace = {"__name__": "__main__"}
exec(compile(open(sys.argv[1]).read(), sys.argv[1], "exec"), namespace)
result = evaluate_check("l2_atomic_save", namespace)
print(observer(), result.passed, result.message.startswith(NOTES["strace"]))
"""


def test_a_self_check_in_a_pod_is_watched_by_strace_alone_passes_and_says_so():
    done = in_pod("-c", _SELF_CHECK_IN_POD, str(ROOT / "solutions" / "02_two_latent_failures.py"))
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["strace", "True", "True"], done.stdout


_TIER_AND_GRADE = """
import json, sys
from graders.checks import grade_submission
from graders.sandbox import box
tier = box.tier()
results = grade_submission(open(sys.argv[1]).read(), "02_two_latent_failures",
                           include_hidden=False)
print(json.dumps([tier.__dict__, {k: [r.passed, r.message] for k, r in results.items()}]))
"""


def test_root_with_cap_sys_ptrace_grades_in_the_uid_tier_observed_by_root():
    caps = (*DOCKER_CAPS, "sys_ptrace")
    with tempfile.TemporaryDirectory() as home:
        done = subprocess.run(
            [*contained(), *docker_root(sys.executable, "-c", _TIER_AND_GRADE,
                                        str(ROOT / "solutions" / "02_two_latent_failures.py"),
                                        caps=caps)],
            capture_output=True, text=True, cwd=ROOT, timeout=600,
            env=dict(os.environ, HOME=home, PYTHONPATH=str(ROOT)))
    assert done.returncode == 0, done.stderr[-2000:]
    tier, results = json.loads(done.stdout.strip().splitlines()[-1])
    assert tier["name"] == "uid" and not tier["observer_uid"], tier
    assert all(passed for passed, _ in results.values()), results


def test_root_refuses_the_uid_tier_when_its_python_is_closed_to_other_users(monkeypatch):
    prefix = Path(os.path.realpath(sys.base_prefix))
    if all(os.stat(p).st_mode & 0o001 for p in prefix.parents):
        pytest.skip(f"{prefix} is open to every user here")
    tools = box.find_tools()
    monkeypatch.setattr(box, "find_tools", lambda: box.Tools(tools.strace, None, tools.prlimit,
                                                             tools.setpriv))
    problem = box.sandbox_problem()
    assert problem and "cannot start the grader's Python" in problem, problem
    assert "other users may not enter" in problem and "chmod o+x" in problem, problem
    assert len(problem.splitlines()) == 1 and "--no-sandbox" in problem


def test_the_message_names_the_ubuntu_24_04_section_of_the_readme():
    readme = (Path(ROOT) / "README.md").read_text()
    assert "### Grading where bubblewrap cannot run" in readme
    assert "Ubuntu 24.04" in readme and "apparmor_parser" in readme
