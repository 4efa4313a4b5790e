"""The sandbox and the observer, for real: what student code can and cannot reach when graded.

Each test runs code through :func:`graders.sandbox.record` (bubblewrap + strace, Linux) and
asks it what it could see; the answers come back as the ``MISSING_FIELDS`` of a Level 1 answer
cell, the one value the sandbox's bootstrap reports without judging.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from pathlib import Path

import pytest

from graders.sandbox import read_safely, record, sandbox_problem

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.sandbox

if sandbox_problem():
    if os.environ.get("CI") == "true":
        raise RuntimeError(f"CI needs the sandbox: {sandbox_problem()}")
    pytest.skip(sandbox_problem(), allow_module_level=True)


def facts(code: str, timeout: float = 10) -> list[str]:
    """Run ``code`` (which sets FACTS, a list of strings) in the sandbox; return FACTS."""
    rec = record(code + "\nMISSING_FIELDS = [str(f) for f in FACTS]\n", None,
                 mode="missing_fields", timeout=timeout)
    assert rec.described is not None, (rec.ended, rec.load, rec.stderr_tail)
    return [item["str"] for item in rec.described["items"]]


def test_the_course_the_checkout_and_the_home_folder_are_not_there():
    seen = facts(f"""
import os, sys
paths = [{str(ROOT / 'solutions' / '02_two_latent_failures.py')!r}, {str(ROOT)!r},
         {str(Path.home())!r} + '/.bash_history', '/home', '/etc/passwd', '/work/main']
FACTS = [p for p in paths if os.path.exists(p)]
# the only other things there are the system and the Python that runs the code
for top in os.listdir('/'):
    if top not in ('usr', 'bin', 'lib', 'lib64', 'lib32', 'sbin', 'proc', 'dev', 'tmp', 'work',
                   'grader') and not sys.base_prefix.startswith('/' + top):
        FACTS.append('/' + top)
""")
    assert seen == []


def test_the_system_is_read_only_and_only_work_and_tmp_are_writable():
    seen = facts("""
import os
FACTS = []
for d in ('/usr', '/usr/lib', '/', '/grader', '/work', '/tmp', '/dev/shm'):
    try:
        with open(os.path.join(d, 'probe'), 'w') as f:
            f.write('x')
        FACTS.append(d)
    except OSError:
        pass
""")
    assert seen == ["/work", "/tmp"]


def test_tmp_is_another_filesystem_so_a_rename_from_it_fails_as_on_a_real_machine():
    seen = facts("""
import os, errno
with open('/tmp/t', 'w') as f:
    f.write('{}')
try:
    os.replace('/tmp/t', 'checkpoint.json')
    FACTS = ['renamed']
except OSError as e:
    FACTS = [errno.errorcode[e.errno], os.stat('/tmp').st_dev != os.stat('.').st_dev]
""")
    assert seen == ["EXDEV", "True"]


def test_no_network_not_even_loopback_of_the_grading_machine():
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    listener.setblocking(False)
    port = listener.getsockname()[1]
    try:
        seen = facts(f"""
import socket
FACTS = []
for host in ('127.0.0.1', '1.1.1.1'):
    s = socket.socket()
    s.settimeout(1)
    try:
        s.connect((host, {port}))
        FACTS.append('connected ' + host)
    except OSError as e:
        FACTS.append(type(e).__name__)
""")
        assert not any(f.startswith("connected") for f in seen), seen
        with pytest.raises(BlockingIOError):
            listener.accept()
    finally:
        listener.close()


def test_the_environment_is_scrubbed_and_the_user_is_not_the_grader():
    os.environ["CHECKPOINT_LAB_SECRET_FOR_TEST"] = "s3cret"
    try:
        seen = facts("""
import os
FACTS = sorted(os.environ) + ['uid=%d' % os.getuid()]
""")
    finally:
        del os.environ["CHECKPOINT_LAB_SECRET_FOR_TEST"]
    assert "CHECKPOINT_LAB_SECRET_FOR_TEST" not in seen
    assert set(seen) - {f for f in seen if f.startswith("uid=")} <= {
        "PATH", "HOME", "LANG", "PYTHONDONTWRITEBYTECODE", "PYTHONIOENCODING", "LC_CTYPE",
        "PWD"}
    uid = next(f for f in seen if f.startswith("uid="))
    if os.geteuid() == 0:
        assert uid != "uid=0"


def test_every_process_it_starts_dies_with_it():
    marker = f"{time.time() % 1000:.6f}"
    facts(f"""
import os, subprocess
subprocess.Popen(['sleep', '{marker}'], start_new_session=True)
if os.fork() == 0:
    os.setsid()
    os.execvp('sleep', ['sleep', '{marker}'])
FACTS = ['started']
""")
    time.sleep(0.2)
    left = subprocess.run(["pgrep", "-f", f"sleep {marker}"], capture_output=True, text=True)
    assert left.stdout.strip() == "", "a process of the submission outlived its sandbox"


def test_a_fork_bomb_stops_at_the_process_limit():
    seen = facts("""
import os, time
n = 0
kids = []
for _ in range(300):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(5)
        os._exit(0)
    kids.append(pid)
FACTS = [len(kids)]
""", timeout=20)
    if os.geteuid() == 0:
        assert int(seen[0]) < 130


def test_a_hang_is_stopped_at_the_deadline():
    started = time.monotonic()
    rec = record("while True:\n    pass\n", None, mode="missing_fields", timeout=1.5)
    assert rec.ended == "hung"
    assert time.monotonic() - started < 8


def test_read_safely_never_follows_a_link_nor_waits_on_a_fifo(tmp_path):
    (tmp_path / "target").write_text("secret")
    (tmp_path / "checkpoint.json").symlink_to(tmp_path / "target")
    assert read_safely(tmp_path).kind == "symlink"
    (tmp_path / "checkpoint.json").unlink()
    os.mkfifo(tmp_path / "checkpoint.json")
    assert read_safely(tmp_path).kind == "fifo"
    (tmp_path / "checkpoint.json").unlink()
    (tmp_path / "checkpoint.json").write_bytes(b"{}")
    snap = read_safely(tmp_path)
    assert snap.kind == "file" and snap.data == b"{}"
    assert read_safely(tmp_path / "nowhere").kind == "absent"
