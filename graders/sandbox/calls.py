"""Answering the submission's frames: its calls served from the scenario's fake model and tools.

Each ``call_model`` and ``execute_tool`` is answered here and logged as a
:class:`~graders.judge.recording.Call` with ``checkpoint.json`` as it was on disk at that moment;
save markers and how the run ended go into the same :class:`~graders.judge.recording.Recording`.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from graders.judge.recording import Call, Recording, Snapshot

__all__ = ["CallServer"]


class CallServer:
    """One run's side of the conversation: ``handle`` each frame, ``reply`` on the socket."""

    def __init__(self, scenario, rec: Recording, sock, snapshot: Callable[[], Snapshot]) -> None:
        self.scenario = scenario
        self.rec = rec
        self.sock = sock
        self.snapshot = snapshot
        self.model = scenario.model() if scenario is not None else None
        self.tools = scenario.executor() if scenario is not None else None

    def reply(self, payload: dict) -> None:
        data = json.dumps(payload).encode() + b"\n"
        try:
            self.sock.sendall(data)
        except OSError:
            pass

    def handle(self, seq: int, op: str, fields: dict) -> bool:
        """Answer frame ``op``; True when the run is over."""
        rec = self.rec
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
            rec.calls.append(self.serve_call(seq, op, fields))
        elif op in ("save_start", "save_end"):
            rec.markers.append({"seq": seq, "op": op, "n": fields.get("n")})
        elif op in ("finished", "raised"):
            rec.ended = op
            rec.error = fields.get("error") if op == "raised" else None
            rec.final = self.snapshot()
            self.reply({})
            return True
        else:
            rec.protocol.append(f"an unknown grader frame {op[:40]!r}")
        return False

    def serve_call(self, seq: int, op: str, fields: dict) -> Call:
        """Answer one ``model`` or ``tool`` call (a refusal is passed on); return its log entry."""
        call = Call(seq=seq, op=op, index=sum(1 for c in self.rec.calls if c.op == op) + 1,
                    snapshot=self.snapshot())
        if op == "model":
            try:
                response = self.model(tools=fields.get("tools"), messages=fields.get("messages"))
                call.stop_reason = response.get("stop_reason")
                self.reply({"response": response})
            except Exception as err:  # noqa: BLE001 - the fake model's refusal, passed on
                call.error = f"{type(err).__name__}: {err}"
                self.reply({"error": str(err)})
        else:
            call.name, call.input = fields.get("name"), fields.get("input")
            try:
                call.result = self.tools(call.name, call.input)
                self.reply({"result": call.result})
            except Exception as err:  # noqa: BLE001 - the fake tool's refusal, passed on
                call.error = f"{type(err).__name__}: {err}"
                self.reply({"error": str(err)})
        return call
