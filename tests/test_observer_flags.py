"""Which strace flags the observer uses where: ``--seccomp-bpf`` only where strace takes it and
no setuid bubblewrap would lose its privileges to it (strace sets no_new_privs)."""

from __future__ import annotations

import os
import sys

import pytest

from graders.sandbox import box

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="strace is Linux's")


def _program(path, body: str) -> str:
    """A stand-in for strace or bubblewrap (not named so: the fast tier's watch would see one)."""
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return str(path)


def test_a_strace_without_seccomp_bpf_is_run_without_it(tmp_path):
    # strace before 5.3 stops at "unrecognized option" and exits 1
    old = _program(tmp_path / "old-strace", 'case "$*" in *--seccomp-bpf*) exit 1;; esac; exit 0')
    tools = box.Tools(old, None, None, None)
    assert "--seccomp-bpf" not in box._strace(tools, tmp_path / "trace")


def test_a_setuid_bubblewrap_keeps_strace_from_seccomp_bpf(tmp_path):
    strace = _program(tmp_path / "any-strace", "exit 0")
    bwrap = _program(tmp_path / "setuid-bwrap", "exit 0")
    os.chmod(bwrap, 0o4755)
    assert "--seccomp-bpf" in box._strace(box.Tools(strace, None, None, None), tmp_path / "t")
    assert "--seccomp-bpf" not in box._strace(box.Tools(strace, bwrap, None, None),
                                              tmp_path / "t")
