"""The sandbox and the observer: which tools this machine has, and the command that uses them.

A submission runs as ``strace -f ... bwrap ... prlimit ... [setpriv ...] python _bootstrap.py``:

- strace (outside the sandbox, out of the submission's reach) records every file operation of
  every process the submission starts;
- bubblewrap gives it its own PID, network, IPC and UTS namespaces (no network; every process it
  starts dies with it), a read-only view of the system and of Python, nothing of the course, the
  checkout or other students, ``/work`` (its working directory) and ``/tmp`` as two small tmpfs
  mounts (two filesystems, as on a real machine), and an empty environment;
- prlimit caps processes, memory, CPU time, open files and file size; as root, setpriv then drops
  to an unprivileged uid of its own with no capabilities.

Linux only. Where bubblewrap or strace is missing, :func:`sandbox_problem` says so in one line.
"""

from __future__ import annotations

import functools
import os
import secrets
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Tools", "find_tools", "sandbox_problem", "observer_problem", "command", "LIMITS",
           "WORK", "TMP", "GRADER", "sandbox_uid", "TRACE_CAP"]

#: Where things are inside the sandbox.
WORK = "/work"
TMP = "/tmp"
GRADER = "/grader"

#: prlimit's limits for the submission's processes.
LIMITS = {
    "nproc": 128,           # processes of the sandbox's own uid (a fork bomb stops here)
    "as": 1 << 30,          # 1 GiB of address space per process
    "nofile": 256,
    "fsize": 32 << 20,      # no file over 32 MiB
    "core": 0,
}
_TMPFS_SIZE = 48 << 20
#: The largest trace strace may write (it holds every byte written, four times over).
TRACE_CAP = 384 << 20


@dataclass(frozen=True)
class Tools:
    """Paths of the programs the sandbox needs (None where missing)."""

    strace: str | None
    bwrap: str | None
    prlimit: str | None
    setpriv: str | None


def find_tools() -> Tools:
    """What this machine has."""
    return Tools(shutil.which("strace"), shutil.which("bwrap"), shutil.which("prlimit"),
                 shutil.which("setpriv"))


def observer_problem(tools: Tools | None = None) -> str | None:
    """Why the outside observer (strace) cannot run here, in one line, or None."""
    tools = tools or find_tools()
    if not sys.platform.startswith("linux"):
        return ("Grading records your code's file operations with strace, which needs Linux; "
                f"this is {sys.platform}. Grade on a Linux machine (or WSL, or a container).")
    if tools.strace is None:
        return ("Grading needs strace to watch your code from outside its process, and this "
                "machine has none: install it (Debian/Ubuntu: sudo apt-get install strace).")
    return None


def sandbox_problem(tools: Tools | None = None) -> str | None:
    """Why the sandbox cannot run here, in one line, or None."""
    tools = tools or find_tools()
    problem = observer_problem(tools)
    if problem:
        return problem
    if tools.bwrap is None or tools.prlimit is None:
        return ("Grading runs each submission in a bubblewrap sandbox, and this machine has no "
                "bwrap: install it (Debian/Ubuntu: sudo apt-get install bubblewrap), or pass "
                "--no-sandbox if you trust every submission.")
    if os.geteuid() == 0 and tools.setpriv is None:
        return ("Grading as root drops each submission to an unprivileged uid with setpriv "
                "(util-linux), which this machine lacks: install util-linux.")
    return _probe(tools.bwrap)


@functools.lru_cache(maxsize=4)
def _probe(bwrap: str) -> str | None:
    """Whether bubblewrap can really make its namespaces here (it may be installed and refused,
    e.g. where AppArmor restricts unprivileged user namespaces, as Ubuntu 24.04 does)."""
    cmd = [bwrap, "--ro-bind", "/", "/", "--unshare-pid", "--unshare-net", "--die-with-parent"]
    if os.geteuid() != 0:
        cmd += ["--unshare-user"]
    try:
        proc = subprocess.run([*cmd, "true"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError) as err:
        return f"bubblewrap could not start here ({err}); grading needs its sandbox."
    if proc.returncode != 0:
        why = (proc.stderr.strip().splitlines() or ["no message"])[-1]
        return (f"bubblewrap is installed but cannot make a sandbox here ({why}); on Ubuntu "
                "24.04 allow unprivileged user namespaces for bwrap (an AppArmor profile), or "
                "grade as root.")
    return None


_TRACED = ",".join((
    "open", "openat", "openat2", "creat", "write", "pwrite64", "writev", "pwritev", "pwritev2",
    "sendfile", "copy_file_range", "splice", "ftruncate", "truncate", "fallocate", "rename",
    "renameat", "renameat2", "link", "linkat", "symlink", "symlinkat", "unlink", "unlinkat",
    "mkdir", "mkdirat", "rmdir", "mknod", "mknodat", "fsync", "fdatasync", "lseek", "chdir",
    "fchdir", "sync", "syncfs", "sync_file_range", "io_uring_setup",
    # descriptors duplicated, closed and inherited, processes and threads started, shared
    # writable maps, asynchronous writes: what the judge's model of the disk follows
    "dup", "dup2", "dup3", "fcntl", "close", "clone", "clone3", "fork", "vfork", "mmap",
    "io_submit",
))


@functools.lru_cache(maxsize=1)
def _python() -> str:
    """The Python that runs submissions: the system's, when it is recent enough (nothing of the
    grading user's home then needs to be in the sandbox), else this one's base interpreter."""
    system = "/usr/bin/python3"
    if os.path.exists(system):
        try:
            out = subprocess.run([system, "-c", "import sys; print(sys.version_info >= (3, 9))"],
                                 capture_output=True, text=True, timeout=10).stdout
            if out.strip() == "True":
                return system
        except (OSError, subprocess.SubprocessError):
            pass
    candidate = os.path.join(sys.base_prefix, "bin", "python3")
    return candidate if os.path.exists(candidate) else sys.executable


def sandbox_uid() -> int:
    """An unprivileged uid for one run (its own, so runs side by side cannot signal each other)."""
    return 61000 + secrets.randbelow(3000)


def command(tools: Tools, *, run_dir: Path, trace: Path, fd: int, info_fd: int | None,
            mode: str, sandbox: bool, uid: int) -> list[str]:
    """The command line that runs the bootstrap on ``run_dir/grader/submission.py``.

    With ``sandbox=False`` (trusted submissions only) the bootstrap runs under strace as this
    user, in ``run_dir/work``.
    """
    python = _python()
    # the trace's own size is capped too: a submission that writes hundreds of MB makes strace
    # exceed it and die (SIGXFSZ), which the grader reports as the submission's doing
    strace = [tools.prlimit, f"--fsize={TRACE_CAP}", "--"] if tools.prlimit else []
    strace += [tools.strace, "-f", "-qq", "-yy", "-xx", "-s", str(16 << 20), "-o", str(trace),
              "--pidns-translation",  # a child's pid inside the sandbox AND in strace's numbering
              "-e", f"trace={_TRACED}", "-e", "inject=io_uring_setup:error=ENOSYS"]
    if not sandbox:
        return [*strace, python, "-I", "-S", str(run_dir / "grader" / "_bootstrap.py"), str(fd),
                str(run_dir / "grader" / "submission.py"), mode]
    box = [tools.bwrap, "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
           "--unshare-cgroup-try", "--die-with-parent", "--new-session",
           "--ro-bind", "/usr", "/usr"]
    for name in ("bin", "lib", "lib64", "lib32", "sbin"):
        path = Path("/") / name
        if path.is_symlink():
            box += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            box += ["--ro-bind", str(path), str(path)]
    if not python.startswith("/usr/"):
        prefix = os.path.realpath(sys.base_prefix)
        box += ["--ro-bind", prefix, prefix]
    box += ["--proc", "/proc", "--dev", "/dev",
            "--size", str(_TMPFS_SIZE), "--perms", "1777", "--tmpfs", TMP,
            "--size", str(_TMPFS_SIZE), "--perms", "0777", "--tmpfs", WORK,
            "--ro-bind", str(run_dir / "grader"), GRADER,
            "--chdir", WORK, "--clearenv",
            "--setenv", "PATH", "/usr/local/bin:/usr/bin:/bin",
            "--setenv", "HOME", WORK, "--setenv", "LANG", "C.UTF-8",
            "--setenv", "PYTHONDONTWRITEBYTECODE", "1", "--setenv", "PYTHONIOENCODING", "utf-8"]
    if info_fd is not None:
        box += ["--info-fd", str(info_fd)]
    if os.geteuid() != 0:
        box += ["--unshare-user", "--cap-drop", "ALL"]
    limits = [tools.prlimit] + [f"--{name}={value}" for name, value in LIMITS.items()]
    drop = []
    if os.geteuid() == 0:
        drop = [tools.setpriv, f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
                "--bounding-set=-all", "--inh-caps=-all", "--no-new-privs", "--"]
    return [*strace, *box, "--", *limits, "--", *drop, python, "-I", "-S",
            f"{GRADER}/_bootstrap.py", str(fd), f"{GRADER}/submission.py", mode]
