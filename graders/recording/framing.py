"""The grader's frames out of the bytes the submission's processes write to its socket.

A frame is ``CKL1 {"op", "len", "sha256", ...}\\n`` and then ``len`` bytes of a JSON object whose
SHA-256 digest is ``sha256``. Anything else (stray bytes, a malformed header, a body that is not
what its header says) is skipped and noted in the recording's ``protocol`` list: the submission
wrote it, so it is never taken as a fact. The frames are numbered by the reader (1, 2, 3, ... in
the order they arrive), never by a number the submission chose.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass

__all__ = ["Frame", "FrameReader", "FRAME_CAP"]

#: Bytes waiting for the end of a frame at most; more and the run is stopped as a flood.
FRAME_CAP = 32 << 20
#: Bytes of one header at most (the bootstrap's are about 150): a longer one is not a frame.
HEADER_CAP = 1024
_MAGIC = b"CKL1 "


@dataclass
class Frame:
    """One frame as it arrived: its number here, its header (parsed), its op (None: not a valid
    frame) and its body."""

    seq: int
    header: dict
    op: str | None
    fields: dict


class FrameReader:
    """The bytes read so far and the frames they hold; ``protocol`` gets what was not a frame."""

    def __init__(self, protocol: list[str]) -> None:
        self.protocol = protocol
        self.buffer = b""
        self.count = 0

    def feed(self, chunk: bytes) -> bool:
        """Add ``chunk``; True when the bytes waiting are more than :data:`FRAME_CAP`."""
        self.buffer += chunk
        return len(self.buffer) > FRAME_CAP

    def frames(self) -> Iterator[Frame]:
        """Each complete frame in the buffer, numbered in arrival order, taken out as it is read.

        A header that is a JSON object is numbered even when the frame is not valid (``op`` is
        then None, and ``protocol`` says why): the trace shows that header written all the same.
        """
        while True:
            start = self.buffer.find(_MAGIC)
            if start < 0:
                if len(self.buffer) > 4:
                    self.protocol.append("bytes that are not a grader frame")
                    self.buffer = self.buffer[-4:]
                return
            if start > 0:
                self.protocol.append("bytes that are not a grader frame")
                self.buffer = self.buffer[start:]
            end = self.buffer.find(b"\n", 0, HEADER_CAP + 6)
            if end < 0:
                if len(self.buffer) <= HEADER_CAP + 5:
                    return
                self.protocol.append("a malformed grader frame")
                self.buffer = self.buffer[5:]
                continue
            try:
                header = json.loads(self.buffer[5:end])
            except ValueError:
                header = None
            try:
                length = int(header["len"])
                op = str(header["op"])
                digest = str(header["sha256"])
                if length < 0:
                    raise ValueError
            except (ValueError, KeyError, TypeError):
                self.protocol.append("a malformed grader frame")
                self.buffer = self.buffer[end + 1:]
                if isinstance(header, dict):
                    self.count += 1
                    yield Frame(self.count, header, None, {})
                continue
            if len(self.buffer) < end + 1 + length:
                return
            body = self.buffer[end + 1:end + 1 + length]
            self.buffer = self.buffer[end + 1 + length:]
            self.count += 1
            try:
                if hashlib.sha256(body).hexdigest() != digest:
                    raise ValueError
                fields = json.loads(body)
                if not isinstance(fields, dict):
                    raise ValueError
            except ValueError:
                self.protocol.append("a malformed grader frame")
                yield Frame(self.count, header, None, {})
                continue
            yield Frame(self.count, header, op, fields)

    def cut_short(self) -> bool:
        """Whether a frame was begun and never finished (its header or body cut short)."""
        return self.buffer.find(_MAGIC) >= 0
