"""Answering the submission's frames: its calls served from the scenario's fake model and tools.

Each ``call_model`` and ``execute_tool`` is answered here and logged as a
:class:`~graders.judge.recording.Call` with ``checkpoint.json`` as it was on disk at that moment
(its digest: the bytes are not kept); every frame, save markers included, is logged in
``Recording.frames`` under the number this process gave it, in the order it arrived. What one
run may cost this process is bounded (:data:`CALL_CAP` calls, :data:`FRAME_COUNT_CAP` frames):
more, and the run is stopped as over budget, the submission's own failure.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from graders.judge.recording import Call, Reading, Recording
from graders.recording.framing import Frame

__all__ = ["CallServer", "CALL_CAP", "FRAME_COUNT_CAP"]

#: Model and tool calls one run may make (the longest scenario needs under 20).
CALL_CAP = 500
#: Frames one run may send, save markers included.
FRAME_COUNT_CAP = 5000


class CallServer:
    """One run's side of the conversation: ``handle`` each frame, ``reply`` on the socket.

    ``before_reply(call)``, if given, runs when a call has been served and before its answer
    is sent (the full-disk run lowers the file-size limit there).
    """

    def __init__(self, scenario, rec: Recording, sock, reading: Callable[[], Reading],
                 before_reply: Callable[[Call], None] | None = None) -> None:
        self.scenario = scenario
        self.rec = rec
        self.sock = sock
        self.reading = reading
        self.before_reply = before_reply
        self.model = scenario.model() if scenario is not None else None
        self.tools = scenario.executor() if scenario is not None else None

    def reply(self, payload: dict) -> None:
        data = json.dumps(payload).encode() + b"\n"
        try:
            self.sock.sendall(data)
        except OSError:
            pass

    def handle(self, frame: Frame) -> bool:
        """Log and answer ``frame``; True when the run is over."""
        rec = self.rec
        rec.frames.append({"seq": frame.seq, "op": frame.op, "header": frame.header})
        if len(rec.frames) > FRAME_COUNT_CAP:
            return self.over_budget(f"sent more than {FRAME_COUNT_CAP:,} frames to the grader")
        op, fields = frame.op, frame.fields
        if op is None:
            return False  # not a valid frame: protocol says why
        if op == "loaded":
            rec.loaded = True
            self.reply({"task": self.scenario.task, "tools": self.scenario.tools})
        elif op == "load_error":
            rec.ended = "not_loaded"
            rec.load = {k: fields.get(k) for k in ("error", "missing")}
            self.reply({})
            return True
        elif op == "described":
            rec.ended = "finished"
            rec.described = fields.get("description")
            self.reply({})
            return True
        elif op in ("model", "tool"):
            if len(rec.calls) >= CALL_CAP:
                return self.over_budget(f"made more than {CALL_CAP:,} model and tool calls")
            rec.calls.append(self.serve_call(frame.seq, op, fields))
        elif op in ("save_start", "save_end"):
            rec.markers.append({"seq": frame.seq, "op": op, "n": fields.get("n")})
        elif op in ("finished", "raised"):
            rec.ended = op
            rec.error = fields.get("error") if op == "raised" else None
            rec.final = self.reading().forget_bytes()
            self.reply({})
            return True
        else:
            rec.protocol.append(f"an unknown grader frame {op[:40]!r}")
        return False

    def over_budget(self, what: str) -> bool:
        """Stop the run: it asked more of the grading process than one run may."""
        self.rec.over_budget = what
        self.rec.ended = "died"
        self.rec.detail = f"{what}, more than the grader allows one run, so it was stopped"
        return True

    def serve_call(self, seq: int, op: str, fields: dict) -> Call:
        """Answer one ``model`` or ``tool`` call (a refusal is passed on); return its log entry."""
        call = Call(seq=seq, op=op, index=sum(1 for c in self.rec.calls if c.op == op) + 1,
                    reading=self.reading().forget_bytes())
        if op == "model":
            try:
                response = self.model(tools=fields.get("tools"), messages=fields.get("messages"))
                call.stop_reason = response.get("stop_reason")
                answer = {"response": response}
            except Exception as err:  # noqa: BLE001 - the fake model's refusal, passed on
                call.error = f"{type(err).__name__}: {err}"
                answer = {"error": str(err)}
        else:
            call.name, call.input = fields.get("name"), fields.get("input")
            try:
                call.result = self.tools(call.name, call.input)
                answer = {"result": call.result}
            except Exception as err:  # noqa: BLE001 - the fake tool's refusal, passed on
                call.error = f"{type(err).__name__}: {err}"
                answer = {"error": str(err)}
        if self.before_reply is not None:
            self.before_reply(call)
        self.reply(answer)
        return call
