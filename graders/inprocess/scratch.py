"""The run's two scratch folders and how the recorder names what is in them.

A recorded run works in a scratch folder of its own, shown to the judge as ``/work``, and has a
second one, shown as ``/tmp`` (its temp folder): two filesystems, as in the sandbox, so that a
rename from one to the other fails with EXDEV for the student's code as it would for real. A path
the code writes literally as ``/tmp/...`` or ``/work/...`` lands in the matching scratch folder.

:class:`Descriptors` keeps what ``/proc/self/fd`` would show for each descriptor the run opened
there: its path now (after renames), or that its file has no name any more.
"""

from __future__ import annotations

import os
import posixpath

from graders.recording import run_folders

__all__ = ["Scratch", "Descriptors", "WORK", "TMP"]

WORK = "/work"
TMP = "/tmp"

# Bound at import, before the recorder patches anything: the recorder's own file work.
_realpath = os.path.realpath
_normpath = os.path.normpath
_mkdir = os.mkdir
_getcwd = os.getcwd


def _text(path) -> str:
    path = os.fspath(path)
    return os.fsdecode(path) if isinstance(path, bytes) else path


def _posix(text: str) -> str:
    return text.replace(os.sep, "/") if os.sep != "/" else text


class Scratch:
    """The real folders behind ``/work`` and ``/tmp`` for one run."""

    def __init__(self, base: str | None = None) -> None:
        self._folder = run_folders.make("rec", base)
        self.root = _realpath(self._folder.path)
        self.work = os.path.join(self.root, "work")
        self.tmp = os.path.join(self.root, "tmp")
        _mkdir(self.work)
        _mkdir(self.tmp)
        self._roots = ((self.work, WORK), (self.tmp, TMP))

    def remove(self) -> None:
        self._folder.remove()

    # -- the student's path -> the real path ----------------------------------------------

    def real(self, path):
        """The path the OS is given for the student's ``path``: ``/tmp/x`` and ``/work/x``
        written literally go to the scratch folders; anything else is used as it is."""
        if isinstance(path, int) or path is None:
            return path
        text = _text(path)
        if text.startswith(self.root):
            return path
        for real, shown in self._roots:
            if text == shown or text.startswith(shown + "/"):
                mapped = real + text[len(shown):].replace("/", os.sep)
                return os.fsencode(mapped) if isinstance(os.fspath(path), bytes) else mapped
        return path

    # -- a real path -> what the judge sees -----------------------------------------------

    def shown_abs(self, real_abs: str) -> str | None:
        """The sandbox's name for the absolute real path ``real_abs``, or None outside both."""
        for real, shown in self._roots:
            if real_abs == real:
                return shown
            if real_abs.startswith(real + os.sep):
                return shown + _posix(real_abs[len(real):])
        return None

    def shown_arg(self, path) -> bytes:
        """A path argument as strace shows it in the sandbox: relative ones as given, absolute
        ones inside the scratch folders under ``/work`` or ``/tmp``."""
        text = _text(self.real(path))
        if os.path.isabs(text):
            shown = self.shown_abs(text)
            if shown is not None:
                return os.fsencode(shown)
        return os.fsencode(_posix(text))

    def resolved(self, path, base: str | None = None) -> str | None:
        """Where ``path`` (relative to ``base``, a real folder, or the working directory) is,
        as the sandbox names it, following links like ``/proc/self/fd`` does; None outside."""
        text = _text(self.real(path))
        if not os.path.isabs(text):
            text = os.path.join(base if base is not None else _getcwd(), text)
        return self.shown_abs(_realpath(text))

    def lexical(self, path, base: str | None = None) -> str | None:
        """Like :meth:`resolved` without following the last link (a name being removed or
        renamed is the link itself)."""
        text = _text(self.real(path))
        if not os.path.isabs(text):
            text = os.path.join(base if base is not None else _getcwd(), text)
        head, tail = os.path.split(_normpath(text))
        shown = self.shown_abs(_realpath(head))
        return None if shown is None else posixpath.join(shown, tail) if tail else shown

    def cwd(self) -> bytes:
        """The working directory as the sandbox names it (the real one when outside)."""
        real = _getcwd()
        return os.fsencode(self.shown_abs(_realpath(real)) or _posix(real))


class Descriptors:
    """Descriptor -> (the sandbox's path of its file, whether that file lost its name)."""

    def __init__(self) -> None:
        self.paths: dict[int, tuple[str, bool]] = {}

    def __contains__(self, fd) -> bool:
        return fd in self.paths

    def opened(self, fd: int, path: str, deleted: bool = False) -> None:
        self.paths[fd] = (path, deleted)

    def copied(self, fd: int, new: int) -> None:
        if fd in self.paths:
            self.paths[new] = self.paths[fd]
        else:
            self.paths.pop(new, None)

    def closed(self, fd: int) -> None:
        self.paths.pop(fd, None)

    def arg(self, fd: int) -> dict:
        """The descriptor as an argument of an operation."""
        path, deleted = self.paths.get(fd, ("", False))
        arg = {"fd": fd, "path": os.fsencode(path), "token": str(fd)}
        if deleted:
            arg["deleted"] = True
        return arg

    def renamed(self, old: str, new: str) -> None:
        """``old`` became ``new``: what was ``new`` lost its name, what was under ``old`` moved."""
        for fd, (path, deleted) in list(self.paths.items()):
            if deleted:
                continue
            if path == new or path.startswith(new + "/"):
                self.paths[fd] = (path, True)
            elif path == old or path.startswith(old + "/"):
                self.paths[fd] = (new + path[len(old):], False)

    def removed(self, path: str) -> None:
        for fd, (now, deleted) in list(self.paths.items()):
            if now == path and not deleted:
                self.paths[fd] = (now, True)
