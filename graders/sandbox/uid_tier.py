"""The uid tier: a sandbox made of what root has where there are no namespaces to make.

Docker's default profile and Gradescope's container run the grader as root without
CAP_SYS_ADMIN or user namespaces, so bubblewrap cannot start. There each submission runs:

- as an unprivileged uid of its own (setpriv; reserved, see :mod:`graders.sandbox.uids`), with no
  capabilities and no_new_privs, under prlimit's limits (processes of that uid, memory, files);
- in a working folder and a temp folder of its own (0700, owned by that uid), on two
  filesystems where the machine has two, inside run folders only that uid may pass through
  (0710, group of that uid; the grader's files 0640);
- confined by ``_confine.py`` before any of its code runs: a seccomp filter refuses the network
  and nested user namespaces, and Landlock (where the kernel has version 2 or later) leaves it
  nothing to read but the system, the grader's Python and its run's files, nothing to write but
  its two folders, and makes a rename between them fail with EXDEV;
- watched by strace, as in the bubblewrap tier, whose trace names the two folders ``/work`` and
  ``/tmp`` (:func:`model_paths`), as the judge's model does;
- ended with every process of its uid: a process running as that uid sends SIGKILL to every
  process it may signal (``kill(-1, SIGKILL)``), which is exactly the processes of that uid;
  their orphans come back to the grader (a child subreaper) and are reaped; files the uid left
  in the machine's shared temp folders are removed.
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from graders.recording import run_folders

__all__ = ["roots", "prepare", "prepare_files", "confine_spec", "drop", "end_uid",
           "remove_residue", "entries_by_owner", "model_paths", "become_subreaper", "probe",
           "renames_fail_between", "new_trace", "can_trace_other_uids", "SHARED_TEMP"]

#: Folders every user may write, where a uid's files are looked for after its run.
SHARED_TEMP = ("/tmp", "/var/tmp", "/dev/shm")
_CONFINE = Path(__file__).with_name("_confine.py")
_DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")
_SYSTEM = ("/usr", "/bin", "/lib", "/lib64", "/lib32", "/sbin", "/proc")


def _free(path: str) -> int:
    try:
        st = os.statvfs(path)
    except OSError:
        return 0
    return st.f_bavail * st.f_frsize if os.access(path, os.W_OK | os.X_OK) else 0


def roots() -> tuple[str, str]:
    """(where run folders and their working folders are made, where temp folders are made): the
    machine's temp folder, and another filesystem with room where there is one (a container's
    ``/dev/shm``). The run folder (the trace among its files) is never under ``/dev/shm``,
    where the submission may make files (POSIX semaphores)."""
    work = os.path.realpath(tempfile.gettempdir())
    dev = os.stat(work).st_dev
    for candidate in ("/dev/shm", "/var/tmp", "/tmp"):
        path = os.path.realpath(candidate)
        if _free(path) >= 16 << 20 and os.stat(path).st_dev != dev:
            return work, path
    return work, work


def _own(path: Path, mode: int, uid: int, gid: int) -> None:
    os.chown(path, uid, gid, follow_symlinks=False)
    os.chmod(path, mode, follow_symlinks=False)


def prepare(run_dir: Path, tmp_root: str, uid: int
            ) -> tuple[Path, Path, run_folders.RunFolder]:
    """Make the run's folders reachable by ``uid`` alone; return (work, tmp, and tmp's parent,
    a run folder held until the caller removes it)."""
    grader = run_dir / "grader"
    _own(run_dir, 0o710, 0, uid)
    prepare_files(grader, uid)
    work = run_dir / "work"
    work.mkdir(mode=0o700)
    _own(work, 0o700, uid, uid)
    held = run_folders.make("tmp", tmp_root)
    parent = held.path
    _own(parent, 0o710, 0, uid)
    tmp = parent / "tmp"
    tmp.mkdir(mode=0o700)
    _own(tmp, 0o700, uid, uid)
    return work, tmp, held


def prepare_files(grader: Path, uid: int) -> None:
    """The grader's folder and files: readable by ``uid`` (its group), writable by no one."""
    _own(grader, 0o750, 0, uid)
    for item in grader.iterdir():
        _own(item, 0o640, 0, uid)


def confine_spec(grader: Path, work: Path, tmp: Path, bpf: bytes, *,
                 need_landlock: bool = False, exdev: bool = False) -> Path:
    """Write what ``_confine.py`` applies (and the filter) into ``grader``; return the spec
    (``exdev``: the run's Python refuses renames between its folders, which the machine does
    not)."""
    shutil.copyfile(_CONFINE, grader / "_confine.py")
    (grader / "filter.bpf").write_bytes(bpf)
    base = os.path.realpath(sys.base_prefix)
    read = [p for p in _SYSTEM if os.path.exists(p)] + [base, str(grader)]
    spec = {"bpf": str(grader / "filter.bpf"), "need_landlock": need_landlock, "exdev": exdev,
            "landlock": {"read": read, "devices": list(_DEVICES), "work": str(work),
                         "tmp": str(tmp), "shm": "/dev/shm" if os.path.isdir("/dev/shm")
                         else None}}
    path = grader / "confine.json"
    path.write_text(json.dumps(spec), encoding="utf-8")
    return path


def drop(setpriv: str, uid: int, *, pdeathsig: bool = False) -> list[str]:
    """The setpriv prefix that runs a command as ``uid``, with nothing more (with ``pdeathsig``,
    killed when its parent dies: setpriv sets it after the change of uid, which clears it)."""
    return [setpriv, f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
            "--bounding-set=-all", "--inh-caps=-all", "--no-new-privs",
            *(["--pdeathsig", "KILL"] if pdeathsig else []), "--"]


def become_subreaper() -> None:
    """Orphans of this process's runs come back to it (so it can reap them), not to PID 1."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        pass


def _kill_as(uid: int) -> None:
    """Send SIGKILL to every process ``uid`` may signal, from a process running as it (its
    result says nothing: kill(-1) succeeds wherever any other process exists)."""
    pid = os.fork()
    if pid == 0:  # the child: nothing but system calls, then _exit
        try:
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
            os.kill(-1, 9)
        finally:
            os._exit(0)
    os.waitpid(pid, 0)


def _processes_of(uid: int) -> list[tuple[int, int, bool]]:
    """(pid, parent pid, is a zombie) of every process of ``uid``. A process's /proc folder is
    owned by its uid (by root where it made itself undumpable: kill(-1) ends those all the
    same; this list only checks it and finds what is left to reap)."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            if not entry.isdigit() or os.stat(f"/proc/{entry}").st_uid != uid:
                continue
            status = Path(f"/proc/{entry}/status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        found.append((int(entry), int(fields.get("PPid", "0")),
                      fields.get("State", "").split()[:1] in (["Z"], ["X"])))
    return found


def end_uid(uid: int, wait_for=None, *, known_alive: bool = True) -> bool:
    """End every process of ``uid``; True when none is left. ``wait_for`` (a Popen) is waited
    for after the kill, so that its own children are reaped by their parent; orphans handed to
    this process (a child subreaper) are reaped here. With ``known_alive=False`` the kill is
    made only if a process of ``uid`` is found."""
    me = os.getpid()
    if known_alive or _processes_of(uid):
        _kill_as(uid)
        if wait_for is not None:
            try:
                wait_for.wait(timeout=2)
            except subprocess.TimeoutExpired:
                pass
    for attempt in range(20):
        left = _processes_of(uid)
        for pid, ppid, zombie in left:
            if zombie and ppid == me:
                _reap_one(pid)
        if not [pid for pid, _ppid, zombie in left if not zombie]:
            return True
        _kill_as(uid)
        time.sleep(0.002 * attempt)
    return False


def _reap_one(pid: int) -> None:
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass


def entries_by_owner(folders) -> Iterator[tuple[os.DirEntry, int]]:
    """Each entry at the top of ``folders`` (those that can be listed) with the uid that owns
    it, the entry itself (a link is not followed); one gone meanwhile is skipped."""
    for folder in folders:
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            try:
                yield entry, entry.stat(follow_symlinks=False).st_uid
            except OSError:
                continue


def remove_residue(uid: int) -> list[str]:
    """Remove ``uid``'s residue at the top of the machine's shared temp folders; return it."""
    removed = []
    for entry, owner in entries_by_owner(SHARED_TEMP):
        if owner != uid:
            continue
        try:
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path, ignore_errors=True)
            else:
                os.unlink(entry.path)
            removed.append(entry.path)
        except OSError as err:
            if err.errno != errno.ENOENT:
                removed.append(f"{entry.path} (not removed: {err.strerror})")
    return removed


def _hexed(text: str) -> str:
    return "".join(f"\\x{b:02x}" for b in os.fsencode(text))


def model_paths(text: str, folders: dict[str, str]) -> str:
    """``text`` (a trace, ``-xx`` hex strings, or a message) with each real folder named as the
    judge's model names it (real path -> ``/work`` or ``/tmp``)."""
    for real, name in folders.items():
        text = re.sub(re.escape(_hexed(real)) + r'(?=\\x2f|"|>|$)',
                      _hexed(name).replace("\\", "\\\\"), text)
        text = re.sub(re.escape(real) + r"(?![\w.-])", name, text)
    return text


def probe(make_command, uid: int, tmp_root: str, work_root: str, bpf: bytes,
          observer_uid: bool) -> dict | str:
    """Run ``_confine.py --probe`` as ``uid`` under strace, the way a submission runs
    (``make_command(trace, spec, cwd)`` gives the command): what it applied and whether strace
    could name the file it wrote (a dict), or why it could not run (one line)."""
    folder = run_folders.make("probe", work_root)
    run_dir = folder.path
    parent = None
    try:
        (run_dir / "grader").mkdir()
        work, tmp, parent = prepare(run_dir, tmp_root, uid)
        spec = confine_spec(run_dir / "grader", work, tmp, bpf)
        prepare_files(run_dir / "grader", uid)
        trace = new_trace(run_dir, uid if observer_uid else 0)
        done = subprocess.run(make_command(trace, spec), capture_output=True, text=True,
                              timeout=30, cwd=work, env={"PATH": "/usr/bin:/bin"})
        if done.returncode != 0:
            why = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
            return f"a submission could not run as an unprivileged uid here ({why})"
        found = json.loads(done.stdout.strip().splitlines()[-1])
        found["observed"] = "<" + _hexed(str(work / "probe.txt")) + ">" in trace.read_text(
            encoding="latin-1")
        return found
    except (OSError, ValueError, IndexError, subprocess.SubprocessError) as err:
        return f"a submission could not run as an unprivileged uid here ({err})"
    finally:
        end_uid(uid, known_alive=False)
        folder.remove()
        if parent is not None:
            parent.remove()


def new_trace(run_dir: Path, owner: int, reserve: int = 0) -> Path:
    """The run's trace file, made empty, 0600, owned by whoever runs strace; with ``reserve``,
    that many bytes of disk are taken for it beyond its end (``fallocate(KEEP_SIZE)``, where the
    filesystem can): strace appending to it (``-A``) then writes into room no other run's files
    can take."""
    trace = run_dir / "trace"
    fd = os.open(trace, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        if reserve:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.fallocate(fd, 1, ctypes.c_long(0), ctypes.c_long(reserve))  # KEEP_SIZE
    finally:
        os.close(fd)
    os.chown(trace, owner, owner)
    return trace


def can_trace_other_uids() -> bool:
    """Whether this process (root) has CAP_SYS_PTRACE, which strace needs to name the files of
    processes of another uid (Docker's default profile does not grant it)."""
    try:
        status = Path("/proc/self/status").read_text()
    except OSError:
        return False
    effective = next((line.split()[1] for line in status.splitlines()
                      if line.startswith("CapEff:")), "0")
    return bool(int(effective, 16) >> 19 & 1)


def renames_fail_between(work_root: str, tmp_root: str) -> bool:
    """Whether a rename from ``tmp_root`` to ``work_root`` fails with EXDEV (two filesystems)."""
    fd, source = tempfile.mkstemp(prefix="checkpoint-lab-exdev-", dir=tmp_root)
    os.close(fd)
    target = os.path.join(work_root, os.path.basename(source))
    try:
        os.rename(source, target)
    except OSError as err:
        return err.errno == errno.EXDEV
    finally:
        for path in (source, target):
            try:
                os.unlink(path)
            except OSError:
                pass
    return False
