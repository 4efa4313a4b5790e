"""The grader's frames out of the bytes the submission's processes write to its socket.

A frame is ``CKL1 {"op", "seq", "len"}\n`` and then ``len`` bytes of a JSON object. Anything else
(stray bytes, a malformed header or body) is skipped and noted in the recording's ``protocol``
list: the submission wrote it, so it is never taken as a fact.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

__all__ = ["FrameReader", "FRAME_CAP"]

#: Bytes waiting for the end of a frame at most; more and the run is stopped as a flood.
FRAME_CAP = 32 << 20
_MAGIC = b"CKL1 "


class FrameReader:
    """The bytes read so far and the frames they hold; ``protocol`` gets what was not a frame."""

    def __init__(self, protocol: list[str]) -> None:
        self.protocol = protocol
        self.buffer = b""

    def feed(self, chunk: bytes) -> bool:
        """Add ``chunk``; True when the bytes waiting are more than :data:`FRAME_CAP`."""
        self.buffer += chunk
        return len(self.buffer) > FRAME_CAP

    def frames(self) -> Iterator[tuple[int, str, dict]]:
        """Each complete frame in the buffer as ``(seq, op, fields)``, taken out as it is read."""
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
            end = self.buffer.find(b"\n")
            if end < 0:
                return
            try:
                header = json.loads(self.buffer[5:end])
                length = int(header["len"])
                op = str(header["op"])
                seq = int(header["seq"])
            except (ValueError, KeyError, TypeError):
                self.protocol.append("a malformed grader frame")
                self.buffer = self.buffer[end + 1:]
                continue
            if len(self.buffer) < end + 1 + length:
                return
            body = self.buffer[end + 1:end + 1 + length]
            self.buffer = self.buffer[end + 1 + length:]
            try:
                fields = json.loads(body)
                if not isinstance(fields, dict):
                    raise ValueError
            except ValueError:
                self.protocol.append("a malformed grader frame")
                continue
            yield seq, op, fields
