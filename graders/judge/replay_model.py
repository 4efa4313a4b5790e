"""The model that replays a recorded run: each operation applied in turn, data writes whole or
torn (only part of their bytes kept, cut at any of :func:`cut_points`), every other call through
:data:`graders.judge.file_operations.OPERATIONS`.
"""

from __future__ import annotations

from graders.judge.disk_model import CHECKPOINT_PATH, UNFOLLOWED, Description, DiskModel
from graders.judge.file_operations import OPERATIONS
from graders.judge.moments import Moment
from graders.judge.trace import Op

__all__ = ["DATA_WRITES", "ReplayModel", "cut_points", "SECTOR", "PAGE"]

#: The system calls that write data into a file.
DATA_WRITES = frozenset({"write", "pwrite64", "writev", "pwritev", "pwritev2", "sendfile",
                         "copy_file_range", "splice"})
#: A disk's sector and a memory page: where real disks and page caches cut a write.
SECTOR, PAGE = 512, 4096
#: The bytes the torn states of one write may hold in all (each is a whole checkpoint.json).
_TORN_BUDGET = 4 << 20


def cut_points(start: int, total: int, size: int) -> list[int]:
    """How many bytes a torn ``total``-byte write at file offset ``start`` may keep, in order:
    the first byte, each 512-byte sector and 4 KiB page boundary it crosses, the middle, and all
    but the last byte. ``size`` is the file's size once written: a very large file keeps the
    page boundaries only, or some of them, so that the states of one write stay within a
    budget (never fewer than the first byte, the middle and the last)."""
    if total < 2:
        return []
    must = {1, total // 2, total - 1}
    room = max(0, _TORN_BUDGET // max(1, size) - len(must))
    sectors = range((start // SECTOR + 1) * SECTOR, start + total, SECTOR)
    bounds = list(sectors)
    if len(bounds) > room:
        bounds = [b for b in bounds if b % PAGE == 0]
    if len(bounds) > room:
        step = len(bounds) / room if room else 0
        bounds = [bounds[int(i * step)] for i in range(room)] if room else []
    return sorted(must | {b - start for b in bounds})


class ReplayModel(DiskModel):
    """A :class:`DiskModel` that applies recorded operations."""

    def apply(self, op: Op, *, keep: int | None = None) -> None:
        """Apply ``op``; for a data write, ``keep`` bytes only (a torn write)."""
        if op.error is not None or op.ret is None:
            return
        for arg in op.args:
            if isinstance(arg, dict) and arg.get("token") == "AT_FDCWD" and arg.get("path"):
                self.set_cwd(op.pid, arg["path"].decode("utf-8", "surrogateescape"))
        call = op.call
        handler = OPERATIONS.get(call)
        if call in DATA_WRITES:
            self._data_write(op, keep)
        elif handler is not None:
            handler(self, op)

    def data_of(self, op: Op) -> tuple[bytes | None, int | None]:
        """(bytes written, explicit offset or None) for a data write; bytes None = unknown."""
        args, n = op.args, op.ret or 0
        if op.call in ("write", "pwrite64"):
            data = args[1] if len(args) > 1 and isinstance(args[1], bytes) else None
            offset = args[3] if op.call == "pwrite64" and len(args) > 3 else None
            return (data[:n] if data is not None and len(data) >= n else None), offset
        if op.call in ("writev", "pwritev", "pwritev2"):
            iov = args[1].get("list", []) if len(args) > 1 and isinstance(args[1], dict) else []
            data = b"".join(item["struct"].get("iov_base", b"") for item in iov
                            if isinstance(item, dict) and "struct" in item
                            and isinstance(item["struct"].get("iov_base"), bytes))
            offset = args[3] if op.call != "writev" and len(args) > 3 else None
            return (data[:n] if len(data) >= n else None), offset
        if op.call == "sendfile":
            source = self.desc(op.pid, args[1] if len(args) > 1 else None)
            if source is None or source.node.unknown:
                return None, None
            ptr = args[2] if len(args) > 2 else None
            if isinstance(ptr, dict) and ptr.get("before"):
                start = ptr["before"][0]
            else:
                start = source.offset
                source.offset += n
            return bytes(source.node.data[start:start + n]), None
        if op.call == "copy_file_range":
            source = self.desc(op.pid, args[0] if args else None)
            if source is None or source.node.unknown:
                return None, None
            off_in = args[1] if len(args) > 1 else None
            if isinstance(off_in, dict) and off_in.get("before"):
                start = off_in["before"][0]
            else:
                start = source.offset
                source.offset += n
            off_out = args[3] if len(args) > 3 else None
            out_offset = off_out["before"][0] if isinstance(off_out, dict) and off_out.get(
                "before") else None
            return bytes(source.node.data[start:start + n]), out_offset
        return None, None

    def target_of(self, op: Op) -> Description | None:
        """The description a data write writes through."""
        args = op.args
        index = {"copy_file_range": 2, "splice": 2}.get(op.call, 0)
        return self.desc(op.pid, args[index] if len(args) > index else None)

    def _payload(self, op: Op) -> tuple[bytes | None, int | None]:
        """``data_of(op)``, computed once per operation (it moves a copy's source offset)."""
        cached = getattr(self, "_cached", None)
        if cached is not None and cached[0] is op:
            return cached[1], cached[2]
        data, offset = self.data_of(op)
        self._cached = (op, data, offset)
        return data, offset

    def into_checkpoint(self, op: Op) -> bool:
        """Whether data write ``op`` writes into the file checkpoint.json now names."""
        desc = self.target_of(op)
        node = self.paths.get(CHECKPOINT_PATH)
        return (desc is not None and node is not None and desc.node is node
                and node.kind == "file" and self.lost is None)

    def write_start(self, op: Op) -> int:
        """The file offset data write ``op`` starts at."""
        desc = self.target_of(op)
        _data, offset = self._payload(op)
        if offset is not None or desc is None:
            return offset or 0
        return len(desc.node.data) if desc.append else desc.offset

    def torn(self, op: Op, keep: int, before: Moment) -> Moment:
        """The moment part way through write ``op``: ``keep`` of its bytes written."""
        moment = Moment(op.index, "during", op, before.kind, before.data, before.listing,
                        before.elsewhere, {"bytes": op.ret, "kept": keep},
                        unfollowed=before.unfollowed)
        if not self.into_checkpoint(op):
            return moment  # a write into another file: checkpoint.json is as it was
        node = self.paths[CHECKPOINT_PATH]
        data, _offset = self._payload(op)
        payload = (data if data is not None else b"\0" * (op.ret or 0))[:keep]
        start = self.write_start(op)
        content = bytearray(node.data)
        if start > len(content):
            content.extend(b"\0" * (start - len(content)))
        content[start:start + len(payload)] = payload
        if data is None or node.unknown:
            moment.kind, moment.data = "unknown", None
            moment.unfollowed = self.unknown_words() or (
                f"{UNFOLLOWED} ({op.call}: bytes the grader could not read)")
        else:
            moment.kind, moment.data = "file", bytes(content)
        return moment

    def _data_write(self, op: Op, keep: int | None) -> None:
        desc = self.target_of(op)
        if desc is None:
            self._unknown_target(op)
            return
        data, offset = self._payload(op)
        if data is None:
            self.unfollowed.append(op)
            data = b"\0" * (op.ret or 0)
            self.write_at(desc, data if keep is None else data[:keep], offset,
                          unknown=f"{op.call}: bytes the grader could not read")
            return
        self.write_at(desc, data if keep is None else data[:keep], offset)

    def _unknown_target(self, op: Op) -> None:
        """A write through a descriptor the model cannot place: lost, if it names a file of the
        working folders that the model does not hold."""
        index = {"copy_file_range": 2, "splice": 2}.get(op.call, 0)
        arg = op.args[index] if len(op.args) > index else None
        if not isinstance(arg, dict) or arg.get("deleted") or not arg.get("path"):
            return
        path = arg["path"].decode("utf-8", "surrogateescape")
        if self.modeled(path) and path not in self.paths:
            self.lose(f"{op.call} into {path}, a file the grader did not see made")
