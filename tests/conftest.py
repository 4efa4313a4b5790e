"""Shared pytest setup: where the project is, and whether we run in CI."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
IN_CI = os.environ.get("CI", "").lower() == "true"


@pytest.fixture(scope="session")
def repo_root() -> Path:
    """The project's top folder."""
    return ROOT


#: Docker's default capabilities (moby's ``DefaultCapabilities``): CAP_SYS_ADMIN is not among them.
DOCKER_CAPS = ("chown", "dac_override", "fsetid", "fowner", "mknod", "net_raw", "setgid", "setuid",
               "setfcap", "setpcap", "net_bind_service", "sys_chroot", "kill", "audit_write")

#: Runs ``argv[argv.index("--") + 1:]`` as Docker's default profile would as root (run as real
#: root): uid 0 without CAP_SYS_ADMIN (Docker's capabilities only) in a user namespace that maps
#: every uid to itself (so setpriv can drop to any uid, as in a container) and whose parent
#: allows no further user namespace (bubblewrap then fails with EPERM, `unshare -U` with ENOSPC,
#: as `../shared/tools/envsim docker-root` has them), in a mount namespace of its own where the
#: grader's Python is readable by every user, as in a container image (a folder above it that
#: is closed to others, such as /root, is replaced by an open one holding only that Python).
_DOCKER_ROOT = r"""
import ctypes, os, signal, sys, tempfile
libc = ctypes.CDLL(None, use_errno=True)
NEWUSER, NEWNS, PRIVATE, REC, BIND, MOVE = 0x10000000, 0x20000, 1 << 18, 1 << 14, 4096, 8192

def ok(result, what):
    if result != 0:
        sys.exit(f"docker-root simulation: {what}: {os.strerror(ctypes.get_errno())}")

def open_up_python():
    ok(libc.unshare(NEWNS), "unshare(mount)")
    ok(libc.mount(b"none", b"/", None, REC | PRIVATE, None), "make / private")
    prefix = os.path.realpath(sys.base_prefix)
    path = prefix
    top = None
    while path != "/":
        path = os.path.dirname(path)
        if path != "/" and not os.stat(path).st_mode & 0o001:
            top = path
    if top is None:
        return
    keep = os.path.join(top, os.path.relpath(prefix, top).split("/")[0])
    hold = tempfile.mkdtemp()
    ok(libc.mount(keep.encode(), hold.encode(), None, BIND | REC, None), "bind " + keep)
    ok(libc.mount(b"tmpfs", top.encode(), b"tmpfs", 0, b"mode=0755"), "tmpfs on " + top)
    os.makedirs(keep)
    ok(libc.mount(hold.encode(), keep.encode(), None, MOVE, None), "move " + keep)

def map_all(pid):
    for name in ("uid_map", "gid_map"):
        with open(f"/proc/{pid}/{name}", "w") as f:
            f.write("0 0 4294967295\n")

def in_new_userns(then):
    ready_r, ready_w = os.pipe()
    mapped_r, mapped_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        ok(libc.unshare(NEWUSER), "unshare(user)")
        os.write(ready_w, b"1")
        os.read(mapped_r, 1)
        then()
        os._exit(0)
    os.read(ready_r, 1)
    map_all(pid)
    os.write(mapped_w, b"1")
    _, status = os.waitpid(pid, 0)
    os._exit(os.waitstatus_to_exitcode(status) & 0xFF)

def container():
    caps = "-all," + ",".join("+" + c for c in CAPS.split())
    os.execvp("setpriv", ["setpriv", "--bounding-set", caps, "--inh-caps", "-all", "--", *CMD])

def outer_userns():
    with open("/proc/sys/user/max_user_namespaces", "w") as f:
        f.write("1\n")
    in_new_userns(container)

CMD = sys.argv[sys.argv.index("--") + 1:]
CAPS = sys.argv[1]
open_up_python()
in_new_userns(outer_userns)
"""


def docker_root(*cmd: str) -> list[str]:
    """``cmd`` run as in Docker's default profile as root (see ``_DOCKER_ROOT``); needs root."""
    return [sys.executable, "-c", _DOCKER_ROOT, " ".join(DOCKER_CAPS), "--", *cmd]
