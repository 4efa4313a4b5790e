"""Saves through a memory map or copied in from a memfd (issue 29.10), self-checked in every
simulated environment (``../shared/tools/envsim``): a memfd's bytes are known from its writes,
so a save copied in with ``sendfile`` from one passes wherever it is checked; writes through a
shared memory map leave no trace anywhere, so a self-check says "not checked here" (never FAIL)
and grading fails it, saying what to change."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fixtures import catalog

pytestmark = pytest.mark.sandbox

ROOT = Path(__file__).resolve().parents[1]
LEVEL = catalog.LEVELS[1]
MEMFD, MAPPED = "passes_memfd_sendfile", "fails_all_mmap_temp_renamed"
ENVSIM = Path("/work/shared/tools/envsim")

_SELF_CHECK = r"""
import json, sys
from pathlib import Path
from graders.checks.grading import grade_submission
from graders.grading.observers import observer
out = {"observer": str(observer())}
for path in sys.argv[1:]:
    found = grade_submission(Path(path).read_text(), "02_two_latent_failures",
                             allow_fallback=True)
    out[Path(path).stem] = {k: [r.status, r.message] for k, r in found.items()}
print(json.dumps(out))
"""


def _self_check(env: str) -> dict:
    files = [str(catalog.CATALOGS[LEVEL] / f"{name}.py") for name in (MEMFD, MAPPED)]
    cmd = [sys.executable, "-c", _SELF_CHECK, *files]
    if env != "full":
        if not ENVSIM.exists() or os.geteuid() != 0 or not shutil.which("bwrap"):
            pytest.skip("the simulated environments need ../shared/tools/envsim as root")
        cmd = [str(ENVSIM), env, "--", *cmd]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=ROOT,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("env", ["full", "no-tools", "docker-root"])
def test_a_self_check_is_fair_to_both_saves_in_every_environment(env):
    found = _self_check(env)
    assert {s for s, _ in found[MEMFD].values()} == {"passed"}, (env, found[MEMFD])
    mapped = found[MAPPED]
    assert {s for s, _ in mapped.values()} == {"not_checked"}, (env, mapped)
    for _status, message in mapped.values():
        assert "memory map (mmap)" in message and "f.write" in message, message


@pytest.mark.timeout(1500)  # the first to ask for `graded` waits for the session's dev check
def test_grading_fails_the_mapped_save_and_says_why_and_credits_the_memfd_one(graded):
    mapped = graded(LEVEL, catalog.CATALOGS[LEVEL] / f"{MAPPED}.py")
    assert not any(r.passed for r in mapped.values())
    assert all(r.status == "failed" for r in mapped.values())
    assert any("memory map (mmap)" in r.message for r in mapped.values())
    memfd = graded(LEVEL, catalog.CATALOGS[LEVEL] / f"{MEMFD}.py")
    assert all(r.passed for r in memfd.values()), {k: r.message for k, r in memfd.items()}
