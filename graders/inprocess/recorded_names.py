"""The recorder's versions of ``os``'s calls on names: renames, links, removals, new folders and
FIFOs, truncation by path, the working directory, ``sync``, and ``os._exit``. Each is logged as
strace shows the system call CPython makes for it on Linux (``os.replace`` is ``rename``, with a
``dir_fd`` it is ``renameat``; ``os.mkfifo`` is ``mknodat``).

A rename or link between ``/work`` and ``/tmp`` fails with EXDEV, as between two filesystems,
whatever the real folders are; ``os.rename`` replaces an existing file everywhere, as POSIX
says (Windows' own refuses). The calls that only read a name (``stat``, ``listdir``, ...) are
not logged; they only send a literal ``/tmp/...`` or ``/work/...`` to the scratch folders.
"""

from __future__ import annotations

import os
import stat

from graders.inprocess.oplog import mode_token
from graders.inprocess.run_state import ProcessExit, RunState

__all__ = ["name_calls", "ORIGINAL"]

_LOGGED = ("rename", "replace", "link", "symlink", "unlink", "remove", "mkdir", "rmdir",
           "mkfifo", "mknod", "truncate", "chdir", "fchdir", "sync", "_exit")
_MAPPED = ("stat", "lstat", "access", "listdir", "scandir", "readlink", "chmod", "utime")
#: ``os``'s own functions, bound at import (before any run patches them).
ORIGINAL = {name: getattr(os, name) for name in _LOGGED + _MAPPED if hasattr(os, name)}
_KINDS = {stat.S_IFIFO: "S_IFIFO", stat.S_IFREG: "S_IFREG", stat.S_IFCHR: "S_IFCHR",
          stat.S_IFBLK: "S_IFBLK", stat.S_IFSOCK: "S_IFSOCK"}


def _root(path: str | None) -> str | None:
    return None if path is None else "/" + path.split("/")[1]


class _Names:
    """The recorded name calls of one run (bound methods are what ``os`` gets)."""

    def __init__(self, run: RunState) -> None:
        self.run = run

    def _base(self, dir_fd):
        """The real folder behind ``dir_fd`` (None: the working directory)."""
        if dir_fd is None:
            return None
        shown = self.run.fds.paths.get(dir_fd, ("",))[0]
        return self.run.scratch.real(shown) if shown else None

    def _same_file(self, a, b) -> bool:
        try:
            return os.path.samestat(ORIGINAL["stat"](a), ORIGINAL["stat"](b))
        except (OSError, KeyError):
            return False

    # -- renames and links -----------------------------------------------------------------

    def rename(self, src, dst, *, src_dir_fd=None, dst_dir_fd=None):
        return self._rename(src, dst, src_dir_fd, dst_dir_fd)

    def replace(self, src, dst, *, src_dir_fd=None, dst_dir_fd=None):
        return self._rename(src, dst, src_dir_fd, dst_dir_fd)

    def _rename(self, src, dst, src_dir_fd, dst_dir_fd):
        run, real = self.run, ORIGINAL["replace"]
        if not run.owns():
            return real(src, dst, src_dir_fd=src_dir_fd, dst_dir_fd=dst_dir_fd)
        shown = run.scratch.shown_arg
        if src_dir_fd is None and dst_dir_fd is None:
            call, args = "rename", [shown(src), shown(dst)]
        else:
            call, args = "renameat", [run.dir_arg(src_dir_fd), shown(src),
                                      run.dir_arg(dst_dir_fd), shown(dst)]
        old = run.scratch.lexical(src, self._base(src_dir_fd))
        new = run.scratch.lexical(dst, self._base(dst_dir_fd))
        real_src, real_dst = run.scratch.real(src), run.scratch.real(dst)
        if old and new and _root(old) != _root(new):
            raise run.cross_device(call, args, src, dst)
        same = self._same_file(real_src, real_dst)

        def after(_result):
            if old and new and not same:
                run.fds.renamed(old, new)

        return run.do(call, args, real, real_src, real_dst, src_dir_fd=src_dir_fd,
                      dst_dir_fd=dst_dir_fd, after=after)

    def link(self, src, dst, *, src_dir_fd=None, dst_dir_fd=None, follow_symlinks=True):
        run, real = self.run, ORIGINAL["link"]
        if not run.owns():
            return real(src, dst, src_dir_fd=src_dir_fd, dst_dir_fd=dst_dir_fd,
                        follow_symlinks=follow_symlinks)
        shown = run.scratch.shown_arg
        if src_dir_fd is None and dst_dir_fd is None and follow_symlinks:
            call, args = "link", [shown(src), shown(dst)]
        else:
            call, args = "linkat", [run.dir_arg(src_dir_fd), shown(src), run.dir_arg(dst_dir_fd),
                                    shown(dst), "AT_SYMLINK_FOLLOW" if follow_symlinks else 0]
        old = run.scratch.lexical(src, self._base(src_dir_fd))
        new = run.scratch.lexical(dst, self._base(dst_dir_fd))
        if old and new and _root(old) != _root(new):
            raise run.cross_device(call, args, src, dst)
        return run.do(call, args, real, run.scratch.real(src), run.scratch.real(dst),
                      src_dir_fd=src_dir_fd, dst_dir_fd=dst_dir_fd,
                      follow_symlinks=follow_symlinks)

    def symlink(self, src, dst, target_is_directory=False, *, dir_fd=None):
        run, real = self.run, ORIGINAL["symlink"]
        if not run.owns():
            return real(src, dst, target_is_directory, dir_fd=dir_fd)
        shown = run.scratch.shown_arg
        call, args = (("symlink", [shown(src), shown(dst)]) if dir_fd is None
                      else ("symlinkat", [shown(src), run.dir_arg(dir_fd), shown(dst)]))
        return run.do(call, args, real, run.scratch.real(src), run.scratch.real(dst),
                      target_is_directory, dir_fd=dir_fd)

    # -- removals and new entries ------------------------------------------------------------

    def unlink(self, path, *, dir_fd=None):
        return self._remove(path, dir_fd)

    def remove(self, path, *, dir_fd=None):
        return self._remove(path, dir_fd)

    def _remove(self, path, dir_fd):
        run, real = self.run, ORIGINAL["unlink"]
        if not run.owns():
            return real(path, dir_fd=dir_fd)
        shown = run.scratch.shown_arg(path)
        call, args = (("unlink", [shown]) if dir_fd is None
                      else ("unlinkat", [run.dir_arg(dir_fd), shown, 0]))
        gone = run.scratch.lexical(path, self._base(dir_fd))
        return run.do(call, args, real, run.scratch.real(path), dir_fd=dir_fd,
                      after=lambda _r: gone and run.fds.removed(gone))

    def rmdir(self, path, *, dir_fd=None):
        run, real = self.run, ORIGINAL["rmdir"]
        if not run.owns():
            return real(path, dir_fd=dir_fd)
        shown = run.scratch.shown_arg(path)
        call, args = (("rmdir", [shown]) if dir_fd is None
                      else ("unlinkat", [run.dir_arg(dir_fd), shown, "AT_REMOVEDIR"]))
        return run.do(call, args, real, run.scratch.real(path), dir_fd=dir_fd)

    def mkdir(self, path, mode=0o777, *, dir_fd=None):
        run, real = self.run, ORIGINAL["mkdir"]
        if not run.owns():
            return real(path, mode, dir_fd=dir_fd)
        shown = run.scratch.shown_arg(path)
        call, args = (("mkdir", [shown, mode_token(mode)]) if dir_fd is None
                      else ("mkdirat", [run.dir_arg(dir_fd), shown, mode_token(mode)]))
        return run.do(call, args, real, run.scratch.real(path), mode, dir_fd=dir_fd)

    def mkfifo(self, path, mode=0o666, *, dir_fd=None):
        run, real = self.run, ORIGINAL["mkfifo"]
        if not run.owns():
            return real(path, mode, dir_fd=dir_fd)
        args = [run.dir_arg(dir_fd), run.scratch.shown_arg(path), _mode(stat.S_IFIFO | mode)]
        return run.do("mknodat", args, real, run.scratch.real(path), mode, dir_fd=dir_fd)

    def mknod(self, path, mode=0o600, device=0, *, dir_fd=None):
        run, real = self.run, ORIGINAL["mknod"]
        if not run.owns():
            return real(path, mode, device, dir_fd=dir_fd)
        args = [run.dir_arg(dir_fd), run.scratch.shown_arg(path), _mode(mode)]
        if stat.S_IFMT(mode) in (stat.S_IFCHR, stat.S_IFBLK):
            args.append(f"makedev({os.major(device):#x}, {os.minor(device):#x})")
        return run.do("mknodat", args, real, run.scratch.real(path), mode, device,
                      dir_fd=dir_fd)

    def truncate(self, path, length):
        run, real = self.run, ORIGINAL["truncate"]
        if not run.owns() or isinstance(path, int):
            if isinstance(path, int):  # os.truncate(fd, n) is ftruncate
                return os.ftruncate(path, length)
            return real(path, length)
        return run.do("truncate", [run.scratch.shown_arg(path), length], real,
                      run.scratch.real(path), length)

    # -- the working directory, sync, the end ------------------------------------------------

    def chdir(self, path):
        run, real = self.run, ORIGINAL["chdir"]
        if isinstance(path, int):
            return self.fchdir(path)
        if not run.owns():
            return real(path)
        return run.do("chdir", [run.scratch.shown_arg(path)], real, run.scratch.real(path))

    def fchdir(self, fd):
        run, real = self.run, ORIGINAL["fchdir"]
        if not run.owns():
            return real(fd)
        arg = run.fds.arg(fd) if fd in run.fds else {"fd": fd, "path": b"", "token": str(fd)}
        return run.do("fchdir", [arg], real, fd)

    def sync(self):
        if not self.run.owns():
            return ORIGINAL["sync"]()
        return self.run.do("sync", [], ORIGINAL["sync"])

    def _exit(self, status):
        if self.run.owns():
            raise ProcessExit(status)
        return ORIGINAL["_exit"](status)


def _mode(mode: int) -> str:
    kind = _KINDS.get(stat.S_IFMT(mode))
    perm = "0" + format(stat.S_IMODE(mode), "o").zfill(2)
    return f"{kind}|{perm}" if kind else perm


def _mapped(run: RunState, name: str):
    real = ORIGINAL[name]

    def call(*args, **kwargs):
        if args and run.owns():
            args = (run.scratch.real(args[0]), *args[1:])
        return real(*args, **kwargs)

    call.__name__ = call.__qualname__ = name
    call.__wrapped__ = real
    return call


def name_calls(run: RunState) -> dict:
    """``os``'s names for the recorded name calls of ``run``."""
    names = _Names(run)
    found = {name: getattr(names, name) for name in _LOGGED if name in ORIGINAL}
    found.update({name: _mapped(run, name) for name in _MAPPED if name in ORIGINAL})
    return found
