"""The seccomp filters a submission runs under, compiled once per grading process by libseccomp.

Built with ``pyseccomp`` (a ctypes binding of libseccomp, the library Docker and systemd build
their filters with; its API is libseccomp's own Python binding's) and handed over as a compiled
BPF program: to bubblewrap (``--seccomp FD``) in the bubblewrap tier, to the sandbox's
``_confine.py`` in the uid tier. Every filter refuses nested user namespaces (``unshare`` or
``clone`` with ``CLONE_NEWUSER``; ``clone3``, whose flags a filter cannot read, answers ENOSYS so
that the C library falls back to ``clone``, as under Docker's own profile) and io_uring (its
operations bypass both seccomp and strace). The uid tier's filter also refuses the network
(every socket but a local stream socket, and ``connect``), what a PID and IPC namespace of its
own would keep inside the run and the uid tier has not (SysV shared memory, message queues and
semaphores, and POSIX message queues: EPERM), and ``fallocate``, which takes disk blocks
without a byte written (EOPNOTSUPP, on which the C library's ``posix_fallocate`` writes the
blocks instead, counted by the disk budget, :mod:`graders.sandbox.uid_budget`). A syscall of
another architecture (a 32-bit one from a 64-bit process) kills the process.
"""

from __future__ import annotations

import errno
import functools
import socket
import tempfile

__all__ = ["filter_problem", "compiled"]

_CLONE_NEWUSER = 0x10000000
_SOCK_TYPE_MASK = 0xF
#: SysV IPC and POSIX message queues: objects that outlive the process that made them.
_IPC = ("shmget", "msgget", "semget", "mq_open")


def filter_problem() -> str | None:
    """Why no filter can be compiled here (one line), or None."""
    try:
        import pyseccomp  # noqa: F401 - its import finds libseccomp
    except ImportError:
        return ("the Python package pyseccomp is missing (reinstall Checkpoint Lab: "
                "pip install -c constraints.txt -e .)")
    except (RuntimeError, OSError) as err:
        return f"libseccomp cannot be loaded ({err}): install libseccomp2"
    return None


@functools.lru_cache(maxsize=2)
def compiled(*, network: bool) -> bytes:
    """The BPF program (``struct sock_filter`` entries) of the filter; ``network=False`` adds
    the network rules."""
    import pyseccomp as sc

    f = sc.SyscallFilter(sc.ALLOW)
    eperm, enosys, eacces = sc.ERRNO(errno.EPERM), sc.ERRNO(errno.ENOSYS), sc.ERRNO(errno.EACCES)
    for name in ("unshare", "clone"):
        f.add_rule(eperm, name, sc.Arg(0, sc.MASKED_EQ, _CLONE_NEWUSER, _CLONE_NEWUSER))
    for name in ("clone3", "io_uring_setup", "io_uring_enter", "io_uring_register"):
        f.add_rule(enosys, name)
    if not network:
        f.add_rule(eacces, "socket", sc.Arg(0, sc.NE, socket.AF_UNIX))
        f.add_rule(eacces, "socket", sc.Arg(0, sc.EQ, socket.AF_UNIX),
                   sc.Arg(1, sc.MASKED_EQ, _SOCK_TYPE_MASK, socket.SOCK_DGRAM))
        f.add_rule(eacces, "connect")
        for name in _IPC:
            f.add_rule(eperm, name)
        f.add_rule(sc.ERRNO(errno.EOPNOTSUPP), "fallocate")
    with tempfile.TemporaryFile() as out:
        f.export_bpf(out)
        out.seek(0)
        return out.read()
