"""Runs INSIDE the uid tier's sandbox, first: confine this process, then run the bootstrap.

Standard library only; started as ``python -I -S _confine.py SPEC BOOTSTRAP ARGS...`` as the
run's own unprivileged uid (setpriv has set no_new_privs). SPEC is a JSON file of the grader's:

- ``bpf``: a compiled seccomp filter (see ``graders/sandbox/filters.py``), loaded as is;
- ``landlock``: the folders this process may read (``read``), the working and temp folders it
  may write (``work``, ``tmp``), the devices it may use (``devices``) and where POSIX
  semaphores are made (``shm``: new files only, unlisted; the grader removes them after the
  run). Where the kernel's Landlock is version 2 or later, everything else on the machine
  becomes unreadable and unwritable for this process and every process it starts, and a rename
  or link between the working folder and the temp folder fails with EXDEV, as between two
  filesystems (the working folder grants a right the temp folder does not, and the reverse,
  so a file moved either way would gain one: Landlock refuses that with EXDEV).

Both are irreversible and inherited. Where neither Landlock nor the machine makes a rename between
the two folders fail (``exdev``: one filesystem, no Landlock), ``os.rename``, ``os.replace`` and
``os.link`` raise EXDEV between them, as on a real machine, so honest code takes the path it would
take there (``shutil.move`` copies); code that goes round it gains nothing, the judge's model
failing that rename all the same. Nothing of the submission has run yet; if a step the
grader asked for fails, this process exits with status 71 and says why on stderr. ``--probe``
instead of BOOTSTRAP writes ``probe.txt`` in the working folder (for the grader to see strace
name it), prints what was applied, as JSON, and exits.
"""

import ctypes
import errno
import json
import os
import runpy
import socket
import sys

_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2
_SYS_CREATE_RULESET, _SYS_ADD_RULE, _SYS_RESTRICT_SELF = 444, 445, 446
_RULE_PATH_BENEATH = 1
_EXECUTE, _WRITE_FILE, _READ_FILE, _READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
_REMOVE_DIR, _REMOVE_FILE, _MAKE_CHAR, _MAKE_DIR = 1 << 4, 1 << 5, 1 << 6, 1 << 7
_MAKE_REG, _MAKE_SOCK, _MAKE_FIFO, _MAKE_BLOCK = 1 << 8, 1 << 9, 1 << 10, 1 << 11
_MAKE_SYM, _REFER, _TRUNCATE, _IOCTL_DEV = 1 << 12, 1 << 13, 1 << 14, 1 << 15
_READ = _READ_FILE | _READ_DIR | _EXECUTE
_EDIT = (_WRITE_FILE | _READ_FILE | _READ_DIR | _REMOVE_DIR | _REMOVE_FILE | _MAKE_DIR
         | _MAKE_REG | _MAKE_SOCK | _MAKE_FIFO | _MAKE_SYM | _REFER | _TRUNCATE)
_SCOPE_ABSTRACT, _SCOPE_SIGNAL = 1 << 0, 1 << 1
_FILE_RIGHTS = _EXECUTE | _WRITE_FILE | _READ_FILE | _TRUNCATE | _IOCTL_DEV

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


class _Refused(Exception):
    pass


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _check(result, what):
    if result < 0:
        err = ctypes.get_errno()
        raise _Refused(f"{what}: {os.strerror(err)}")
    return result


def _seccomp(path):
    with open(path, "rb") as f:
        program = f.read()
    buffer = ctypes.create_string_buffer(program, len(program))
    prog = _SockFprog(len(program) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    _check(_libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
    _check(_libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0),
           "seccomp")


def _abi():
    version = _libc.syscall(_SYS_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(1))
    return max(int(version), 0)


def _rules(spec, abi):
    """(path, rights) of every rule, for Landlock ``abi``."""
    ioctl = _IOCTL_DEV if abi >= 5 else 0
    truncate = _TRUNCATE if abi >= 3 else 0
    rules = [(p, _READ) for p in spec["read"]]
    rules += [(p, _READ_FILE | _WRITE_FILE | truncate | ioctl) for p in spec["devices"]]
    if spec.get("shm"):
        rules.append((spec["shm"], _READ_FILE | _WRITE_FILE | _MAKE_REG | _REMOVE_FILE
                      | truncate))
    rules.append((spec["work"], _EDIT | _EXECUTE))
    rules.append((spec["tmp"], _EDIT | ioctl))
    return rules


def _landlock(spec):
    """Apply the rules; return the Landlock version used (0: none here)."""
    abi = _abi()
    if abi < 2:
        return 0
    handled = (1 << (14 if abi < 3 else 15 if abi < 5 else 16)) - 1
    # from version 6: no signal to a process outside this domain (strace, the grader) and no
    # connection to an abstract unix socket made outside it
    attr = (ctypes.c_uint64 * 3)(handled, 0, _SCOPE_SIGNAL | _SCOPE_ABSTRACT if abi >= 6 else 0)
    size = 24 if abi >= 6 else 8
    ruleset = _check(_libc.syscall(_SYS_CREATE_RULESET, ctypes.byref(attr),
                                   ctypes.c_size_t(size), ctypes.c_uint32(0)),
                     "landlock_create_ruleset")
    try:
        for path, rights in _rules(spec, abi):
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                if not os.path.isdir(path):
                    rights &= _FILE_RIGHTS
                rule = _PathBeneath(rights & handled, fd)
                _check(_libc.syscall(_SYS_ADD_RULE, ruleset, _RULE_PATH_BENEATH,
                                     ctypes.byref(rule), ctypes.c_uint32(0)),
                       f"landlock_add_rule {path}")
            finally:
                os.close(fd)
        _check(_libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
        _check(_libc.syscall(_SYS_RESTRICT_SELF, ruleset, ctypes.c_uint32(0)),
               "landlock_restrict_self")
    finally:
        os.close(ruleset)
    return abi


def _exdev_between(folders):
    """``os.rename``, ``os.replace`` and ``os.link`` raise EXDEV between ``folders``."""
    roots = [os.path.realpath(f) for f in folders]

    def side(path, dir_fd):
        if dir_fd is not None or isinstance(path, int):
            return None
        full = os.path.realpath(os.fsdecode(path))
        return next((i for i, r in enumerate(roots) if full == r or full.startswith(r + "/")),
                    None)

    def refusing(real):
        def call(src, dst, *args, src_dir_fd=None, dst_dir_fd=None, **kwargs):
            a, b = side(src, src_dir_fd), side(dst, dst_dir_fd)
            if a is not None and b is not None and a != b:
                raise OSError(errno.EXDEV, os.strerror(errno.EXDEV), src, None, dst)
            return real(src, dst, *args, src_dir_fd=src_dir_fd, dst_dir_fd=dst_dir_fd,
                        **kwargs)
        return call

    for name in ("rename", "replace", "link"):
        setattr(os, name, refusing(getattr(os, name)))


def _network_refused():
    try:
        socket.socket(socket.AF_INET, socket.SOCK_STREAM).close()
    except OSError:
        return True
    return False


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        spec = json.load(f)
    try:
        if spec.get("bpf"):
            _seccomp(spec["bpf"])
        landlock = _landlock(spec["landlock"]) if spec.get("landlock") else 0
        if spec.get("need_landlock") and not landlock:
            raise _Refused("this kernel has no Landlock (version 2 or later)")
        if spec.get("exdev") and landlock < 2:
            _exdev_between([spec["landlock"]["work"], spec["landlock"]["tmp"]])
    except (_Refused, OSError) as err:
        sys.stderr.write(f"checkpoint-lab sandbox: could not confine the run: {err}\n")
        sys.stderr.flush()
        os._exit(71)
    if sys.argv[2] == "--probe":
        with open("probe.txt", "w") as f:
            f.write("observed")
        print(json.dumps({"landlock": landlock, "network_refused": _network_refused(),
                          "uid": os.getuid(),
                          "python": [*sys.version_info[:3], os.path.realpath(sys.base_prefix)]}))
        sys.stdout.flush()
        os._exit(0)
    sys.argv = sys.argv[2:]
    runpy.run_path(sys.argv[0], run_name="__main__")


main()
