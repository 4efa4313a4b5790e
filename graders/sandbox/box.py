"""The sandbox and the observer: which tools and which tier this machine has, and the command.

A submission runs under strace (outside the sandbox, out of the submission's reach: it records
every file operation of every process the submission starts), in one of two tiers, chosen once
per grading process from what the machine allows (:func:`tier`):

- **bubblewrap** (``strace ... bwrap ... prlimit ... [setpriv ...] python _bootstrap.py``): its
  own PID, network, IPC and UTS namespaces (no network; every process it starts dies with it), a
  read-only view of the system and of the grader's Python, nothing of the course, the checkout or
  other students, ``/work`` (its working directory) and ``/tmp`` as two small tmpfs mounts (two
  filesystems, as on a real machine), an empty environment, and a seccomp filter that refuses
  nested user namespaces (with ``--disable-userns`` too where bubblewrap runs unprivileged);
  prlimit caps processes, memory, CPU time, open files and file size; as root, setpriv then
  drops to an unprivileged uid of its own with no capabilities.
- **uid**, where bubblewrap cannot make namespaces but the grader is root (Docker's default
  profile, Gradescope): the same observer and limits, an unprivileged uid of its own, private
  folders, seccomp and Landlock; see :mod:`graders.sandbox.uid_tier`.

Linux only. Where neither tier can run, :func:`sandbox_problem` says why in one line.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import graders.sandbox.filters as filters
import graders.sandbox.uid_tier as uid_tier
import graders.sandbox.uids as uids

__all__ = ["Tools", "Tier", "find_tools", "tier", "sandbox_problem", "observer_problem",
           "command", "cpu_limit", "scratch_root", "LIMITS", "WORK", "TMP", "GRADER", "TRACE_CAP",
           "WITHOUT_LANDLOCK_ENV", "WITHOUT_LANDLOCK_GIVES_UP", "interpreter_problem"]

#: Where things are inside the sandbox (and what the judge's model calls them in every tier).
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
_README = "README's \"Grading where bubblewrap cannot run\""
#: Set (to 1) by ``checkpoint-lab grade --without-landlock``: the uid tier may run without
#: Landlock (the grading workers inherit it; a submission's environment never holds it).
WITHOUT_LANDLOCK_ENV = "CHECKPOINT_LAB_WITHOUT_LANDLOCK"
#: What the uid tier without Landlock gives up, for the flag's help and the refusal.
WITHOUT_LANDLOCK_GIVES_UP = (
    "without Landlock a submission may read every file on the machine that every user may "
    "read, and list the other processes' command lines (which name the course and "
    "submissions folders); the grader closes the course, the submissions folder and its own "
    "$HOME to other users (chmod o-rwx) and each run's folders to the other runs, so what "
    "stays readable is what you left world-readable elsewhere")


@dataclass(frozen=True)
class Tools:
    """Paths of the programs the sandbox needs (None where missing)."""

    strace: str | None
    bwrap: str | None
    prlimit: str | None
    setpriv: str | None


@dataclass(frozen=True)
class Tier:
    """The isolation a submission gets here: ``bubblewrap`` or ``uid``.

    For the uid tier: ``landlock`` is the kernel's Landlock version it confines with (0: none),
    ``work_root`` and ``tmp_root`` where its folders are made, ``renames_fail`` whether a
    rename between them fails by itself (two filesystems, or Landlock; else the run's Python
    refuses it), and ``observer_uid`` whether strace runs as the submission's uid (where root
    lacks CAP_SYS_PTRACE, strace cannot read another uid's descriptors; Landlock then keeps the
    submission from its observer and its trace).
    """

    name: str
    landlock: int = 0
    work_root: str = ""
    tmp_root: str = ""
    renames_fail: bool = True
    observer_uid: bool = False

    def describe(self) -> str:
        """One line for the instructor: the tier and what isolates each submission."""
        if self.name == "bubblewrap":
            return ("sandbox: bubblewrap tier (namespaces of its own, no network, an "
                    "unprivileged uid, limits)")
        confined = (f"Landlock v{self.landlock}" if self.landlock else "no Landlock "
                    "(--without-landlock): files every user may read stay readable")
        return ("sandbox: uid tier (no namespaces here: an unprivileged uid of its own, limits, "
                f"seccomp without network, {confined})")


def find_tools() -> Tools:
    """What this machine has."""
    return Tools(shutil.which("strace"), shutil.which("bwrap"), shutil.which("prlimit"),
                 shutil.which("setpriv"))


def scratch_root() -> str | None:
    """Where a run's folder goes: tmpfs (/dev/shm) when it has room, else the temp folder."""
    shm = "/dev/shm"
    try:
        st = os.statvfs(shm)
        if st.f_bavail * st.f_frsize > (256 << 20) and os.access(shm, os.W_OK | os.X_OK):
            return shm
    except (OSError, AttributeError):
        pass
    return None


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
    """Why no sandbox tier can run here, in one line, or None."""
    chosen = tier(tools)
    return chosen if isinstance(chosen, str) else None


def tier(tools: Tools | None = None) -> Tier | str:
    """The tier submissions run in here, or why none can (one line). Probed once per process."""
    # A browser's Python has no geteuid; observer_problem says no first there anyway.
    return _choose(tools or find_tools(), os.geteuid() if hasattr(os, "geteuid") else -1,
                   os.environ.get(WITHOUT_LANDLOCK_ENV) == "1")


@functools.lru_cache(maxsize=4)
def _choose(tools: Tools, euid: int, without_landlock: bool = False) -> Tier | str:
    problem = observer_problem(tools)
    if problem:
        return problem
    why = filters.filter_problem()
    if why:
        return f"Grading filters each submission's system calls, and {why}."
    if tools.prlimit is None:
        return ("Grading limits each submission with prlimit (util-linux), which this machine "
                "lacks: install util-linux.")
    bwrap_why = _probe(tools.bwrap) if tools.bwrap else "no bwrap is installed"
    if bwrap_why is None and (euid != 0 or tools.setpriv):
        return Tier("bubblewrap")
    if euid != 0:
        if tools.bwrap is None:
            return ("Grading runs each submission in a bubblewrap sandbox, and this machine has "
                    "no bwrap: install it (Debian/Ubuntu: sudo apt-get install bubblewrap), or "
                    "pass --no-sandbox if you trust every submission.")
        return (f"Grading needs a sandbox, and here bubblewrap cannot make namespaces "
                f"({bwrap_why}) and the grader is not root, so it cannot run submissions as a "
                "uid of their own: grade on Gradescope (checkpoint-lab gradescope) or as root in "
                "a container, or pass --no-sandbox if you trust every submission; on Ubuntu "
                f"24.04 see {_README}.")
    if tools.setpriv is None:
        return ("Grading as root drops each submission to an unprivileged uid with setpriv "
                "(util-linux), which this machine lacks: install util-linux.")
    return _uid_tier(tools, bwrap_why, without_landlock)


@functools.lru_cache(maxsize=4)
def _probe(bwrap: str) -> str | None:
    """Whether bubblewrap can really make its namespaces here (it may be installed and refused,
    e.g. where AppArmor restricts unprivileged user namespaces, as Ubuntu 24.04 does, or in a
    container without CAP_SYS_ADMIN)."""
    cmd = [bwrap, "--ro-bind", "/", "/", "--unshare-pid", "--unshare-net", "--die-with-parent"]
    if os.geteuid() != 0:
        cmd += ["--unshare-user"]
    try:
        proc = subprocess.run([*cmd, "true"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError) as err:
        return f"bubblewrap could not start: {err}"
    if proc.returncode != 0:
        return (proc.stderr.strip().splitlines() or ["no message"])[-1]
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
    "io_submit", "memfd_create",
))


def interpreter_problem() -> str | None:
    """Why a run's uid cannot start the grader's Python (a pyenv in /root), and what to do."""
    for path in (_python(), os.path.realpath(sys.base_prefix)):
        for folder in reversed(Path(path).parents):
            try:
                mode = folder.stat().st_mode
            except OSError:
                continue
            if not mode & 0o001:
                return (f"a submission's own uid cannot start the grader's Python ({path}) "
                        f"under {folder}, which other users may not enter (mode "
                        f"{mode & 0o777:o}). Install Python where every user may read it (the "
                        "distribution's python3, /usr/local, /opt), or, if nothing in "
                        f"{folder} is secret, let others pass through it (chmod o+x {folder})")
    return None


def _uid_tier(tools: Tools, bwrap_why: str, without_landlock: bool = False) -> Tier | str:
    """The uid tier, if a submission really runs confined and observed as a uid of its own."""
    closed = interpreter_problem()
    if closed:
        return (f"Grading needs a sandbox: bubblewrap cannot make namespaces here ({bwrap_why}), "
                f"and {closed}; pass --no-sandbox only if you trust every submission.")
    work_root, tmp_root = uid_tier.roots()
    observer_uid = not uid_tier.can_trace_other_uids()
    held = uids.reserve()
    try:
        found = uid_tier.probe(
            lambda trace, spec: _uid_command(tools, observer_uid, trace, spec, held.uid,
                                             cpu_limit(0), ["--probe"]),
            held.uid, tmp_root, work_root, filters.compiled(network=False), observer_uid)
    finally:
        held.release()
    landlock = 0 if isinstance(found, str) else int(found.get("landlock") or 0)
    if isinstance(found, str):
        why = found
    elif not found.get("network_refused"):
        why = "its network was not refused"
    elif found.get("python") != _interpreter_id():
        why = (f"the grader's Python ({os.path.realpath(sys.base_prefix)}) cannot be read by an "
               "unprivileged uid (a folder above it is closed to other users): install it where "
               "every user may read it, such as /usr/local or /opt")
    elif not found.get("observed") or (observer_uid and landlock < 2):
        why = ("strace cannot read the file descriptors of another uid's processes here (root "
               "lacks CAP_SYS_PTRACE) and the kernel has no Landlock 2+ to keep a submission "
               "away from an observer of its own uid: run the container with --cap-add "
               "SYS_PTRACE")
    elif landlock < 2 and not without_landlock:
        why = (f"the kernel has no Landlock (version 2 or later) to keep a submission to its own "
               f"files: {WITHOUT_LANDLOCK_GIVES_UP}. Pass --without-landlock to grade so "
               "(checkpoint-lab grade --without-landlock; for Gradescope, build the "
               "autograder with checkpoint-lab gradescope --without-landlock), or grade where "
               "bubblewrap runs or the kernel is 5.19 or later")
    else:
        why = None
    if why:
        return (f"Grading needs a sandbox: bubblewrap cannot make namespaces here "
                f"({bwrap_why}), and {why}; pass --no-sandbox only if you trust every "
                "submission.")
    renames = landlock >= 2 or uid_tier.renames_fail_between(work_root, tmp_root)
    return Tier("uid", landlock=landlock, work_root=work_root, tmp_root=tmp_root,
                renames_fail=renames, observer_uid=observer_uid)


def _interpreter_id() -> list:
    """What ``_confine.py --probe`` reports of the Python it runs on, for the grader's own."""
    return [*sys.version_info[:3], os.path.realpath(sys.base_prefix)]


@functools.lru_cache(maxsize=1)
def _python() -> str:
    """The Python that runs submissions: the grader's own interpreter (its base, outside any
    virtual environment), whose prefix the sandbox gets read-only, in every tier: the student's
    code runs on the Python the grader and the student's kernel run on."""
    base = getattr(sys, "_base_executable", None) or sys.executable
    candidates = [base, os.path.join(sys.base_prefix, "bin",
                                     f"python{sys.version_info[0]}.{sys.version_info[1]}")]
    for candidate in candidates:
        if candidate and os.path.exists(candidate):
            return os.path.realpath(candidate)
    return os.path.realpath(sys.executable)


@functools.lru_cache(maxsize=2)
def _disable_userns(bwrap: str) -> bool:
    """Whether this bubblewrap has ``--disable-userns`` (0.8 and later)."""
    try:
        out = subprocess.run([bwrap, "--help"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return False
    return "--disable-userns" in out.stdout + out.stderr


def _strace(tools: Tools, trace: Path, cpu: int = 0) -> list[str]:
    """The observer's command: its limits (:func:`_observer_limits`), a death signal, strace."""
    return [*_observer_limits(tools, cpu), *_dies_with_grader(tools), *_strace_alone(tools, trace)]


def _observer_limits(tools: Tools, cpu: int) -> list[str]:
    # the trace's own size is capped too: a submission that writes hundreds of MB makes strace
    # exceed it and die (SIGXFSZ), which the grader reports as the submission's doing. The CPU
    # cap (every process under the observer inherits it) bounds what a run whose grader was
    # killed can burn before the next grading's sweep ends it.
    if not tools.prlimit:
        return []
    return [tools.prlimit, f"--fsize={TRACE_CAP}", *([f"--cpu={cpu}"] if cpu else []), "--"]


def _dies_with_grader(tools: Tools) -> list[str]:
    """``setpriv --pdeathsig KILL --`` where this setpriv has it: the program it starts is killed
    when the grading process dies (a SIGKILL from outside included), so a run never outlives
    its grader: strace's death ends bubblewrap (``--die-with-parent``) and with it every process
    of the sandbox."""
    return [tools.setpriv, "--pdeathsig", "KILL", "--"] if _has_pdeathsig(tools.setpriv) else []


@functools.lru_cache(maxsize=2)
def _has_pdeathsig(setpriv: str | None) -> bool:
    """Whether this setpriv (util-linux 2.33 and later) takes ``--pdeathsig``; probed once."""
    if not setpriv:
        return False
    try:
        proc = subprocess.run([setpriv, "--pdeathsig", "KILL", "--", "true"],
                              stdin=subprocess.DEVNULL, capture_output=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return False
    return proc.returncode == 0


def cpu_limit(timeout: float) -> int:
    """Seconds of CPU time each process of a run may use: far more than a run that keeps to its
    ``timeout`` can use, so only a run its grader no longer watches meets it."""
    return max(60, int(timeout * 6))


def _strace_alone(tools: Tools, trace: Path) -> list[str]:
    return [tools.strace, "-f", *_seccomp_bpf(tools), "-qq", "-yy", "-xx", "-s",
            str(16 << 20), "-o", str(trace),
            # a child's pid both inside the sandbox and in strace's numbering
            "--pidns-translation",
            "-e", f"trace={_TRACED}", "-e", "inject=io_uring_setup:error=ENOSYS"]


def _seccomp_bpf(tools: Tools) -> list[str]:
    """``--seccomp-bpf`` where this strace has it: the traced processes then stop only at the
    calls in ``trace=`` (a kernel filter picks them), not at every call, which made the observer
    most of a run's cost (the interpreter's start-up alone makes thousands of calls). Not with
    a setuid bubblewrap: strace sets no_new_privs, which would keep it from its privileges."""
    bwrap = tools.bwrap
    if bwrap and os.path.exists(bwrap) and os.stat(bwrap).st_mode & 0o4000:
        return []
    return ["--seccomp-bpf"] if _strace_has_seccomp_bpf(tools.strace) else []


@functools.lru_cache(maxsize=2)
def _strace_has_seccomp_bpf(strace: str) -> bool:
    """Whether this strace (5.3 and later) takes ``--seccomp-bpf``; probed once per process."""
    try:
        proc = subprocess.run([strace, "-f", "--seccomp-bpf", "-qq", "-e", "trace=close",
                               "-o", os.devnull, "true"], stdin=subprocess.DEVNULL,
                              capture_output=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return False
    return proc.returncode == 0


def command(tools: Tools, *, run_dir: Path, trace: Path, fd: int, info_fd: int | None,
            mode: str, sandbox: bool, uid: int, chosen: Tier | None = None,
            seccomp_fd: int | None = None, spec: Path | None = None,
            cpu: int = 0) -> list[str]:
    """The command line that runs the bootstrap on ``run_dir/grader/submission.py``.

    With ``sandbox=False`` (trusted submissions only) the bootstrap runs under strace as this
    user, in ``run_dir/work``. In the uid tier (``chosen.name == "uid"``) it runs as ``uid``
    through ``_confine.py`` with ``spec``; in the bubblewrap tier ``seccomp_fd`` holds the
    filter bubblewrap loads.
    """
    python = _python()
    strace = _strace(tools, trace, cpu)
    grader = run_dir / "grader"
    if not sandbox:
        # the run itself dies with strace too (nothing else ends an unconfined run)
        return [*strace, *_dies_with_grader(tools), python, "-I", "-S",
                str(grader / "_bootstrap.py"), str(fd), str(grader / "submission.py"), mode]
    if chosen is not None and chosen.name == "uid":
        return _uid_command(tools, chosen.observer_uid, trace, spec, uid, cpu,
                            [str(grader / "_bootstrap.py"), str(fd),
                             str(grader / "submission.py"), mode])
    limits = [tools.prlimit] + [f"--{name}={value}" for name, value in LIMITS.items()]
    box = _bwrap(tools, run_dir, info_fd, seccomp_fd, python)
    drop = uid_tier.drop(tools.setpriv, uid) if os.geteuid() == 0 else []
    # -X utf8=0: no LANG here (see _bootstrap.py), and Python's locale as with LANG=C.UTF-8
    return [*strace, *box, "--", *limits, "--", *drop, python, "-I", "-S", "-X", "utf8=0",
            f"{GRADER}/_bootstrap.py", str(fd), f"{GRADER}/submission.py", mode]


def _uid_command(tools: Tools, observer_uid: bool, trace: Path, spec: Path, uid: int,
                 cpu: int, tail: list[str]) -> list[str]:
    """The uid tier's command: strace over prlimit over setpriv over ``_confine.py`` (with
    ``observer_uid``, setpriv first: strace itself runs as ``uid``)."""
    limits = [tools.prlimit] + [f"--{name}={value}" for name, value in LIMITS.items()] + ["--"]
    # the submission's first process dies with strace (no PID namespace ends the rest: the CPU
    # cap bounds them, and the next grading's sweep ends every process of a uid no run holds)
    drop = uid_tier.drop(tools.setpriv, uid, pdeathsig=_has_pdeathsig(tools.setpriv))
    confine = [_python(), "-I", "-S", str(spec.parent / "_confine.py"), str(spec), *tail]
    # -A: strace appends to the trace made for it, into the room taken for it ahead of time
    if observer_uid:  # the same drop, made before strace: strace runs as ``uid`` too
        return [*_observer_limits(tools, cpu), *drop, *_strace_alone(tools, trace), "-A",
                *limits, *_dies_with_grader(tools), *confine]
    return [*_strace(tools, trace, cpu), "-A", *limits, *drop, *confine]


def _bwrap(tools: Tools, run_dir: Path, info_fd: int | None, seccomp_fd: int | None,
           python: str) -> list[str]:
    """bubblewrap's part of the command: the namespaces, the mounts, the environment."""
    box = [tools.bwrap, "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
           "--unshare-cgroup-try", "--die-with-parent", "--new-session",
           "--ro-bind", "/usr", "/usr"]
    for name in ("bin", "lib", "lib64", "lib32", "sbin"):
        path = Path("/") / name
        if path.is_symlink():
            box += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            box += ["--ro-bind", str(path), str(path)]
    prefix = os.path.realpath(sys.base_prefix)
    if not python.startswith("/usr/") or not prefix.startswith("/usr"):
        # its folders made passable (e.g. /root, 0700 outside): an interpreter whose own
        # library cannot be reached would load the system's libpython instead
        for parent in reversed(Path(prefix).parents[:-1]):
            box += ["--perms", "0755", "--dir", str(parent)]
        box += ["--ro-bind", prefix, prefix]
    box += ["--proc", "/proc", "--dev", "/dev",
            "--size", str(_TMPFS_SIZE), "--perms", "1777", "--tmpfs", TMP,
            "--size", str(_TMPFS_SIZE), "--perms", "0777", "--tmpfs", WORK,
            "--ro-bind", str(run_dir / "grader"), GRADER,
            # the sandbox's own root and /dev are tmpfs with no size: as root the submission's
            # uid may not write them, as a user it owns them; read-only, they hold nothing
            "--remount-ro", "/dev", "--remount-ro", "/",
            "--chdir", WORK, "--clearenv",
            "--setenv", "PATH", "/usr/local/bin:/usr/bin:/bin",
            "--setenv", "HOME", WORK,  # LANG: set by the bootstrap (prlimit loads no locale)
            "--setenv", "PYTHONDONTWRITEBYTECODE", "1", "--setenv", "PYTHONIOENCODING", "utf-8"]
    if info_fd is not None:
        box += ["--info-fd", str(info_fd)]
    if seccomp_fd is not None:
        box += ["--seccomp", str(seccomp_fd)]
    if os.geteuid() != 0:
        box += ["--unshare-user", "--cap-drop", "ALL"]
        if _disable_userns(tools.bwrap):
            box += ["--disable-userns"]
    return box


def uid_environment(work: Path, tmp: Path) -> dict[str, str]:
    """The uid tier's environment for the submission: the bubblewrap tier's, with its folders."""
    return {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(work), "LANG": "C.UTF-8",
            "TMPDIR": str(tmp), "PYTHONDONTWRITEBYTECODE": "1", "PYTHONIOENCODING": "utf-8"}

