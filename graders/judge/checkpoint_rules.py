"""The checker: is what a crash left on disk what resume needs? One :class:`Verdict` per point.

The checker runs in the deciding process, on an :class:`~graders.judge.observation.Observation` read
from disk. It holds ``checkpoint.json`` to the protocol (valid JSON, the six fields, ``version``
1, the scenario's task) and to invariants tied to the crash point and to the ledger of what the
tools really did, never to a golden file:

- every tool that ran is recorded with its result in ``messages`` or is the ``pendingToolUse``;
  one that returned before the next model call is recorded; none is recorded twice, none that
  never ran is recorded, and ``pendingToolUse`` never names a call whose result is recorded;
- ``turns`` equals the tool results recorded; ``messages`` is a conversation the API accepts (up
  to the pending call) and the script's own, so far;
- a torn write or a kill before a rename leaves exactly the previous complete save (or the save's
  own, if it completed).
"""

from __future__ import annotations

import json
from typing import Any

from graders.inprocess.child import CHECKPOINT
from graders.judge.crash_points import NO_CRASH, CrashPoint, point_from_id
from graders.judge.observation import Observation, describe_error
from graders.judge.verdict import LOAD_POINT, Verdict
from graders.loop.protocol import SIX_FIELDS
from graders.text import plural

__all__ = ["check", "load_error_verdict", "skipped_verdict", "PROBLEMS"]

#: Every problem code a verdict's ``evidence["problem"]`` / ``evidence["problems"]`` may hold.
#: Graders key partial credit on them: keep the codes stable.
PROBLEMS: dict[str, str] = {
    # how the run ended
    "not_loaded": "the submission could not be loaded (syntax error, top-level error, ...)",
    "skipped": "the crash harness cannot run on this platform",
    "hung": "the run was still going after the timeout",
    "raised": "the submission raised an exception before the crash point",
    "died": "the run ended itself (os._exit, a signal, a killed runner)",
    "not_reached": "the run finished without reaching a crash point the dry run reached",
    "harness_error": "the harness itself failed (a bug in Checkpoint Lab)",
    "tear_not_applied": "a save wrote all its bytes under the file-size limit: no tear happened",
    # the write
    "in_place_write": "a torn write of checkpoint.json itself: half a file on disk",
    "copy_over": "the temp file was copied over checkpoint.json, and the copy was torn",
    "partial_write": "a short write to the temp file, renamed over checkpoint.json anyway",
    "invalid_json": "checkpoint.json is not valid JSON",
    "not_a_save": "after a torn write or rename kill, the file is neither save n-1 nor save n",
    "deleted_before_rename": "checkpoint.json deleted before the temp file was renamed over it",
    "never_renamed": "the temp file is never renamed, so checkpoint.json never exists",
    "wrong_place": "checkpoint.json written somewhere other than the working directory",
    "no_checkpoint": "a finished run left no checkpoint.json",
    "no_saves": "run_agent never called save_checkpoint",
    # the fields
    "bad_field": "a field has the wrong type, or the file is not a JSON object",
    "missing_fields": "some of the six fields are missing",
    "version": "a version other than 1",
    "task": "task is not the run's task",
    "turns": "turns differs from the tool results recorded",
    # save point A and pendingToolUse
    "no_save_point_a": "a tool ran and left no trace: no save before it ran",
    "save_point_a_after_tool": "pendingToolUse is saved only after the tool ran",
    "pending_without_input": "pendingToolUse lacks input",
    "pending_incomplete": "pendingToolUse lacks id or name",
    "pending_never_reset": "pendingToolUse names a call whose result is recorded",
    "pending_mismatch": "pendingToolUse is not the call the model named",
    "pending_before_message": "pendingToolUse set, but the assistant message naming it is absent",
    "pending_missing": "messages end with a tool request but pendingToolUse is null",
    # save point B and messages
    "no_save_point_b": "a tool returned and the model was called again, result not saved",
    "recorded_twice": "a tool result appears twice in messages",
    "never_ran": "messages record a result for a tool that never ran",
    "conversation": "messages is not a conversation the Messages API accepts",
    "script_mismatch": "messages departs from what the model and tools produced",
    "incomplete": "a finished run's checkpoint lacks some tool results",
}

#: The crash point kinds in the middle of a save: judged only for what the save left (one
#: complete save, or none yet); where tools ran is judged at the calls (each check its own).
WRITE_KINDS = ("torn_write", "killed_before_rename")

_SIX = {"version": int, "task": str, "turns": int, "tokensUsed": (int, float), "messages": list}


def load_error_verdict(scenario: str, message: str) -> Verdict:
    """The single verdict of a submission that could not be loaded."""
    return Verdict(scenario, LOAD_POINT, LOAD_POINT, False, message,
                   {"problem": "not_loaded", "problems": ["not_loaded"]})


def skipped_verdict(scenario: str, reason: str, point: str = NO_CRASH,
                    kind: str = NO_CRASH) -> Verdict:
    """A verdict for a point that could not be run on this platform."""
    return Verdict(scenario, point, kind, False, reason, {"problem": "skipped"}, skipped=True)


def _bytes(n: int | None) -> str:
    return "?" if n is None else f"{n:,}"


def _canon(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=repr)



_SCRIPTS: dict[int, tuple[Any, dict]] = {}


def _script(scenario) -> dict:
    """The scenario's calls, tools and conversation, copied once (the checker only reads them)."""
    held = _SCRIPTS.get(id(scenario))
    if held is None or held[0] is not scenario:
        held = (scenario, {"calls": scenario.tool_calls, "tools": scenario.tools,
                           "conversation": scenario.conversation()})
        if len(_SCRIPTS) > 16:
            _SCRIPTS.clear()
        _SCRIPTS[id(scenario)] = held
    return held[1]


class _Check:
    def __init__(self, obs: Observation, scenario, point: CrashPoint) -> None:
        self.obs = obs
        self.sc = scenario
        self.point = point
        self.calls = _script(scenario)["calls"]
        self.problems: list[tuple[str, str]] = []
        self.notes: list[str] = []
        self.advice: list[str] = []
        self.evidence: dict[str, Any] = {"ended": obs.ended, "detail": obs.detail}
        self.state: Any = None
        self.same: str | None = None  # which complete save a torn write or rename kill left
        self.recorded: list[str] = []  # tool_use ids answered in messages, in order

    # -- helpers ---------------------------------------------------------------------------

    def fail(self, key: str, text: str) -> None:
        self.problems.append((key, text))

    @property
    def done(self) -> str:
        if self.point.kind == NO_CRASH:
            return "Ran with no crash"
        return f"Killed {self.point.label}"

    def call_number(self, call_id: Any) -> int | None:
        for i, call in enumerate(self.calls, 1):
            if call["id"] == call_id:
                return i
        return None

    def executions(self) -> list[tuple[int, dict]]:
        """(script call number, ledger entry) of each tool that ran, matched by name and input."""
        pairs = []
        used: set[int] = set()
        for entry in self.obs.ledger:
            if "error" in entry:
                continue  # the fake tool refused the call: nothing happened
            for i, call in enumerate(self.calls, 1):
                if (i not in used and call["name"] == entry.get("name")
                        and _canon(call["input"]) == _canon(entry.get("input"))):
                    pairs.append((i, entry))
                    used.add(i)
                    break
        return pairs

    def ran(self) -> list[int]:
        """Script call numbers of the tools that ran (the ledger)."""
        return [number for number, _ in self.executions()]

    def returned(self) -> list[int]:
        """Call numbers of tools that returned their result to the submission."""
        killed_in = self.point.index if self.point.kind == "killed_during_tool" else None
        return [number for number, entry in self.executions()
                if "result" in entry and entry["index"] != killed_in]

    def a_save_after_tool(self, k: int) -> dict | None:
        """A save of the dry run placed after tool ``k`` returned that marks it pending."""
        call_id = self.calls[k - 1]["id"] if k <= len(self.calls) else None
        for save in self.point.trace or []:
            pending = save.get("pending")
            if (save.get("phase") == "B" and save.get("tool") == k and isinstance(pending, dict)
                    and pending.get("id") == call_id):
                return save
        return None

    def no_trace_message(self, k: int, on_disk: str) -> tuple[str, str]:
        name = self.calls[k - 1]["name"] if k <= len(self.calls) else "?"
        if self.point.kind == "killed_during_tool" and k == self.point.index:
            on_disk = on_disk.replace("checkpoint.json held", "checkpoint.json still held", 1)
            trace = "so this call left no trace"
        else:
            trace = f"so tool {k} ({name}), which ran, left no trace"
        late = self.a_save_after_tool(k)
        if late is not None:
            return "save_point_a_after_tool", (
                f"{on_disk}, {trace}. Your checkpoint first names tool {k} in pendingToolUse in "
                f"save {late['n']}, after the tool had returned: for the whole window between "
                "the model naming the tool and its result being recorded, nothing on disk said "
                "the call was under way. Resume would not know the call was ever made and would "
                "run it again.")
        return "no_save_point_a", (
            f"{on_disk}, {trace}: nothing on disk covered the window between the model naming "
            "the tool and its result being recorded (save point A). Resume would not know the "
            "call was ever made and would run it again.")

    def leftovers(self) -> list[str]:
        return [name for name, size in self.obs.files.items() if size != "dir/"]

    # -- the checks, in the order a student should fix them --------------------------------

    def run(self) -> Verdict:
        obs = self.obs
        if obs.ended == "skipped":
            return skipped_verdict(obs.scenario, obs.detail, obs.point, obs.kind)
        if obs.ended == "not_loaded":
            return load_error_verdict(obs.scenario, obs.detail)
        self.evidence.update(ledger=[e.get("name") for e in obs.ledger],
                             saves=len(obs.saves), model_calls=obs.model_calls,
                             tool_calls=obs.tool_calls, leftover_files=dict(obs.files))
        if self.ending():
            self.disk()
        return self.verdict()

    def ending(self) -> bool:
        """Check how the child ended; False if there is no point in looking at the disk."""
        obs = self.obs
        if obs.ended == "hung":
            self.fail("hung", f"{self.done}? Your code was {obs.detail}. A loop that never "
                      "stops or a call that waits forever cannot be checkpointed; the loop ends "
                      "when the model's stop_reason is no longer \"tool_use\".")
            return False
        if obs.ended == "raised" and (obs.error or {}).get("harness"):
            self.fail("harness_error", "The crash harness itself failed here (a bug in "
                      f"Checkpoint Lab, not in your code): {describe_error(obs.error)}.")
            return False
        if obs.ended == "raised":
            stage = ("" if self.point.kind == NO_CRASH
                     else f" before the harness could crash it {self.point.label}")
            cross = ("" if "cross-device" not in str((obs.error or {}).get("message", "")) else
                     " A rename cannot cross from one filesystem to another: here, as on many "
                     "real machines, the temp directory (/tmp) is not on the filesystem of the "
                     "working directory, where checkpoint.json lives.")
            self.fail("raised", f"Your run_agent raised {describe_error(obs.error)}{stage}."
                      + cross)
            return False
        if obs.ended == "died":
            self.fail("died", f"{self.done}? No: your code {obs.detail}, before that moment.")
            return False
        if obs.ended == "finished" and self.point.kind != NO_CRASH:
            self.fail("not_reached", f"Your run finished without ever reaching the crash point "
                      f"({self.point.label}), which the first run of your code did reach: does "
                      "it behave differently from one run to the next?")
            return False
        if not obs.saves and obs.ended == "finished":
            self.advice.append("run_agent never called save_checkpoint (through its module-level "
                               "name), so the harness saw no saves.")
        return True

    def disk(self) -> None:
        obs = self.obs
        if obs.checkpoint is None:
            self.missing()
            return
        self.evidence["checkpoint_bytes"] = obs.checkpoint_bytes
        if obs.parse_error is not None:
            self.unreadable()
            return
        if self.point.kind in WRITE_KINDS:
            self.same_as_a_save()
        self.state = json.loads(obs.checkpoint)
        if self.fields():
            self.protocol()

    def missing(self) -> None:
        obs, point = self.obs, self.point
        ran = self.ran()
        leftovers = self.leftovers()
        renames_onto = any(dst == CHECKPOINT for s in point.trace or []
                           for _src, dst in s["renames"])
        self.evidence["checkpoint_bytes"] = None
        if obs.elsewhere:
            self.fail("wrong_place", f"{self.done}: there was no checkpoint.json in the working "
                      f"directory, only {obs.elsewhere[0]}. save_checkpoint must write "
                      "checkpoint.json in the current directory, where resume looks for it.")
            return
        if point.kind in WRITE_KINDS and point.before is not None:
            removed = CHECKPOINT in (point.save or {}).get("removes", [])
            renamed_away = any(src == CHECKPOINT for src, _dst in (point.save or {}).get(
                "renames", []))
            how = ("deleted checkpoint.json before renaming the temp file over it" if removed
                   else "renamed checkpoint.json away before the new one was in place"
                   if renamed_away else "left no checkpoint.json for a moment")
            self.fail("deleted_before_rename", (
                f"{self.done}: there was no checkpoint.json at all, because save {point.index} "
                f"{how}, though save {point.index - 1} had written one. Killed in between, "
                "resume finds nothing and starts the task over: at every instant the name "
                "checkpoint.json must point at one complete save."))
            return
        if point.kind in WRITE_KINDS:
            self.notes.append("there was no complete checkpoint.json yet, and this save had "
                              "not made one, so resume starts from the task")
            return
        if leftovers and not renames_onto and (point.kind == NO_CRASH or ran):
            temp = leftovers[0]
            self.fail("never_renamed", (
                f"{self.done}: there was no checkpoint.json, only {temp} "
                f"({_bytes(obs.files[temp])} bytes). Your save writes a temp file that never "
                "becomes checkpoint.json, so resume finds no checkpoint at all."))
            return
        if point.kind == NO_CRASH:
            self.fail("no_checkpoint", f"{self.done}, and there was no checkpoint.json at the "
                      "end: save_checkpoint must write checkpoint.json in the current directory.")
            return
        if not ran:
            self.notes.append("there was no checkpoint.json yet, and no tool had run, so resume "
                              "starts from the task with nothing lost")
            return
        first = ran[0]
        on_disk = "there was no checkpoint.json at all"
        if not obs.saves and point.trace is not None and not point.trace:
            self.fail("no_saves", f"{self.done}: {on_disk}, though tool {first} had run: "
                      "run_agent never called save_checkpoint. Resume would start over.")
            return
        key, text = self.no_trace_message(first, f"{self.done}: {on_disk}")
        self.fail(key, text)

    def unreadable(self) -> None:
        obs, point = self.obs, self.point
        what = obs.parse_error
        if point.kind == "torn_write":
            save = point.save or {}
            expected = point.tear_expected
            held = (f"checkpoint.json held {_bytes(obs.checkpoint_bytes)} of its "
                    f"{_bytes(expected)} bytes and {what.split(' (')[0]}")
            self.evidence.update(bytes_on_disk=obs.checkpoint_bytes, bytes_expected=expected)
            opened = save.get("opened", [])
            if CHECKPOINT in opened and opened.index(CHECKPOINT) > 0:
                self.fail("copy_over", (
                    f"{self.done}: {held}. Your save writes a temp file, then copies it over "
                    "checkpoint.json: the copy is itself an in-place write, and it was cut off "
                    "halfway, a torn write. Resume would fail on json.load, and this file was the "
                    "task's only copy."))
            elif CHECKPOINT in opened:
                self.fail("in_place_write", (
                    f"{self.done}: {held}: a torn write. The save was overwriting checkpoint.json "
                    "in place when it was cut off, so the task's only copy is part old, part "
                    "new, part missing. Resume would fail on json.load."))
            else:
                self.fail("partial_write", (
                    f"{self.done}: {held}. The write to the temp file was cut short, and your "
                    "save renamed it over checkpoint.json anyway (os.write may write fewer bytes "
                    "than it was given). Resume would fail on json.load."))
            return
        self.fail("invalid_json", f"{self.done}: checkpoint.json ({_bytes(obs.checkpoint_bytes)} "
                  f"bytes) {what}. Resume would fail on json.load before it read anything.")

    def same_as_a_save(self) -> bool:
        """For torn writes and kills before a rename: name the save the file holds, if it is one.

        Only a label for the message: the file is judged by what resume would read from it
        (does it parse, do its fields match what really ran), never by its bytes.
        """
        obs, point = self.obs, self.point
        n = point.index
        if point.before is not None and obs.checkpoint == point.before:
            self.same = f"checkpoint.json still held save {n - 1}, complete"
        elif point.after is not None and obs.checkpoint == point.after:
            self.same = f"checkpoint.json held save {n}, complete"
        return True

    def fields(self) -> bool:
        state = self.state
        if not isinstance(state, dict):
            self.fail("bad_field", f"{self.done}: checkpoint.json holds a JSON "
                      f"{type(state).__name__}, not an object with the six fields.")
            return False
        missing = [f for f in SIX_FIELDS if f not in state]
        if missing:
            self.fail("missing_fields", (
                f"{self.done}: checkpoint.json lacks {', '.join(missing)}. Resume needs all six "
                "fields: version, task, turns, tokensUsed, messages, pendingToolUse."))
            return False
        for name, kind in _SIX.items():
            value = state[name]
            if not isinstance(value, kind) or isinstance(value, bool):
                self.fail("bad_field", f"{self.done}: in checkpoint.json, {name} is "
                          f"{json.dumps(value)[:80]}, not {_kind(kind)}.")
                return False
        pending = state["pendingToolUse"]
        if pending is not None and self.point.kind not in WRITE_KINDS:
            if not isinstance(pending, dict):
                self.fail("bad_field", f"{self.done}: pendingToolUse is "
                          f"{json.dumps(pending)[:80]}; it is null or {{id, name, input}}.")
                return False
            absent = [k for k in ("id", "name", "input") if k not in pending]
            if absent:
                k = self.call_number(pending.get("id"))
                which = f"tool {k}" if k else "the tool"
                self.fail("pending_without_input" if absent == ["input"] else "pending_incomplete",
                          f"{self.done}: pendingToolUse records "
                          f"{{{', '.join(k for k in ('id', 'name', 'input') if k in pending)}}} "
                          f"but has no {' or '.join(absent)}. Without the input {which} was "
                          "called with, resume can neither re-run the call nor check what it "
                          "did. Record all three: id, name and input.")
                return False
        if state["version"] != 1:
            self.fail("version", f"{self.done}: checkpoint.json has version {state['version']}. "
                      "This protocol is version 1; resume must refuse a version it does not "
                      "know, so it would refuse this checkpoint.")
            return False
        if state["task"] != self.sc.task:
            self.fail("task", f"{self.done}: task in checkpoint.json is "
                      f"{json.dumps(state['task'])[:80]}, not the task the run was given: "
                      "resume could not tell which task this checkpoint belongs to.")
            return False
        return True

    def protocol(self) -> None:
        state = self.state
        messages = state["messages"]
        if not self.conversation(messages):
            return
        if self.point.kind in WRITE_KINDS:
            return
        recorded = self.recorded
        r = len(recorded)
        pending = state["pendingToolUse"]
        ran = self.ran()
        returned = self.returned()
        turns = state["turns"]
        on_disk = self.describe_disk()
        self.evidence["on_disk"] = {"turns": turns, "results_recorded": r,
                                    "pendingToolUse": pending, "tokensUsed": state["tokensUsed"]}
        # pendingToolUse against what is recorded
        if pending is not None:
            k = self.call_number(pending.get("id"))
            if pending.get("id") in recorded:
                self.fail("pending_never_reset", (
                    f"{self.done}: {on_disk}, but tool {k} ({pending.get('name')}) had "
                    "finished: its result is already recorded in messages. "
                    "pendingToolUse was never reset to None at save point B, so resume would "
                    f"think tool {k} never finished and run it a second time."))
                return
            expected = self.calls[r] if r < len(self.calls) else None
            if expected is None or _canon(pending) != _canon(expected):
                want = (f"{{id, name, input}} of tool {r + 1}, {json.dumps(expected)}"
                        if expected else "null: every call is recorded")
                self.fail("pending_mismatch", (
                    f"{self.done}: pendingToolUse is {json.dumps(pending)[:200]}, but it should "
                    f"be {want[:300]}: the call the model named, exactly as it named it."))
                return
            if len(messages) % 2 == 1:
                self.fail("pending_before_message", (
                    f"{self.done}: pendingToolUse names tool {r + 1}, but the last message is not "
                    "the assistant message that asked for it: resume would hold a call in flight "
                    "with no request for it in the conversation it sends the model."))
                return
        elif len(messages) % 2 == 0:
            self.fail("pending_missing", (
                f"{self.done}: messages end with the model's request for tool {r + 1}, but "
                "pendingToolUse is null: resume cannot tell whether that call was under way."))
            return
        if turns != r:
            self.fail("turns", (
                f"{self.done}: turns is {turns}, but messages record {plural(r, 'tool result')}. "
                "turns counts finished turns (one per recorded result); resume would count its "
                "stopping conditions from the wrong number."))
            return
        if self.point.kind == NO_CRASH and not self.finished(r, pending):
            return
        # the ledger against the file
        pending_k = self.call_number(pending["id"]) if pending else None
        for k in ran:
            if k <= r or k == pending_k:
                continue
            key, text = self.no_trace_message(k, f"{self.done}: {on_disk}")
            self.fail(key, text)
            return
        for k in range(1, r + 1):
            if k not in ran:
                self.fail("never_ran", (
                    f"{self.done}: messages record a result for tool {k}, but the ledger shows "
                    "it never ran. A checkpoint records what happened, nothing else."))
                return
        strict = self.point.kind in (NO_CRASH, "killed_during_model_call")
        if strict:
            for k in returned:
                if k > r:
                    self.fail("no_save_point_b", (
                        f"{self.done}: {on_disk}: tool {k} had returned and the model had been "
                        "called again, but its result was never saved (no save point B). Resume "
                        f"would have to run tool {k} again."))
                    return

    def conversation(self, messages: list) -> bool:
        counts: dict[Any, int] = {}
        for message in messages[1:]:
            content = message.get("content") if isinstance(message, dict) else None
            if isinstance(content, list):
                for block in content:
                    if isinstance(block, dict) and block.get("type") == "tool_result":
                        tid = block.get("tool_use_id")
                        counts[tid] = counts.get(tid, 0) + 1
                        if counts[tid] == 1:
                            self.recorded.append(tid)
        twice = [tid for tid, c in counts.items() if c > 1]
        if twice:
            k = self.call_number(twice[0])
            self.fail("recorded_twice", (
                f"{self.done}: messages record the result of tool {k or twice[0]} "
                f"{counts[twice[0]]} times. Each tool call is recorded exactly once; the API "
                "would refuse a conversation that answers one call twice."))
            return False
        from fake_llm import ConversationError, validate_conversation

        try:
            validate_conversation(messages, _script(self.sc)["tools"], allow_pending=True)
        except ConversationError as err:
            self.fail("conversation", (
                f"{self.done}: messages in checkpoint.json is not a conversation the API would "
                f"accept: {err}. Resume would send it to the model and get an error back."))
            return False
        script = _script(self.sc)["conversation"]
        for i, message in enumerate(messages):
            if i >= len(script) or _canon(message) != _canon(script[i]):
                want = (json.dumps(script[i])[:200] if i < len(script)
                        else "nothing: the conversation had ended")
                self.fail("script_mismatch", (
                    f"{self.done}: messages[{i}] in checkpoint.json is "
                    f"{json.dumps(message)[:200]}, but the model and tools produced {want}. "
                    "messages must hold the conversation exactly as it happened: the model's "
                    "content as it came, each tool result as the tool returned it."))
                return False
        return True

    def describe_disk(self) -> str:
        """What checkpoint.json held: its turn and pendingToolUse (and which save it was)."""
        state = self.state
        pending = state["pendingToolUse"]
        k = self.call_number(pending.get("id")) if isinstance(pending, dict) else None
        marker = "no pendingToolUse" if pending is None else f"pendingToolUse naming tool {k}"
        if self.same:
            return (f"{self.same} ({_bytes(self.obs.checkpoint_bytes)} bytes; "
                    f"turn {state['turns']}, {marker})")
        joint = "and" if pending is None else "with"
        return f"checkpoint.json held turn {state['turns']} {joint} {marker}"

    def finished(self, r: int, pending: Any) -> bool:
        """For no_crash: does the last checkpoint hold the whole run? Advice either way."""
        total = len(self.calls)
        if r != total or pending is not None:
            self.fail("incomplete", (
                f"{self.done}: the run finished, but checkpoint.json records "
                f"{plural(r, 'tool result')} of {total}"
                + (" and still has a pendingToolUse" if pending is not None else "")
                + ": the final state was never saved after the last tool result."))
            return False
        if self.state["tokensUsed"] == 0:
            self.advice.append(
                "tokensUsed stayed 0. This exercise does not grade it, but resume's compaction "
                "threshold runs off it: add response[\"usage\"][\"output_tokens\"] after every "
                "model call, the first one included.")
        outside = sorted({src for s in self.obs.saves for src, dst in s.renames
                          if dst == CHECKPOINT and isinstance(src, str) and src.startswith("/")})
        if outside:
            self.advice.append(
                f"Your temp file ({outside[0].rsplit('/', 1)[-1]}) is made outside "
                "checkpoint.json's directory: a rename "
                "is atomic only within one filesystem, and across two it fails (EXDEV). Make it "
                "next to checkpoint.json, e.g. tempfile.mkstemp(dir=...).")
        temps = self.leftovers()
        if temps:
            self.advice.append(
                f"{', '.join(temps[:3])} {'was' if len(temps) == 1 else 'were'} left next to "
                "checkpoint.json after a finished run: remove a temp file if its save fails, "
                "or rename it.")
        return True

    # -- the verdict -----------------------------------------------------------------------

    def verdict(self) -> Verdict:
        obs, point = self.obs, self.point
        passed = not self.problems
        if passed:
            message = self.pass_message()
        else:
            message = self.problems[0][1]
            if len(self.problems) > 1:
                message += " Also: " + self.problems[1][1]
        if self.advice and (passed or point.kind == NO_CRASH):
            message += " Advice: " + " ".join(self.advice)
        self.evidence["problem"] = self.problems[0][0] if self.problems else None
        self.evidence["problems"] = [key for key, _ in self.problems]
        self.evidence["advice"] = list(self.advice)
        if obs.torn:
            self.evidence["torn"] = obs.torn
        return Verdict(obs.scenario, obs.point, obs.kind, passed, message, self.evidence)

    def pass_message(self) -> str:
        point = self.point
        notes = list(self.notes)
        if self.state is not None:
            state = self.state
            if point.kind == NO_CRASH:
                return (f"{self.done}: checkpoint.json holds all "
                        f"{plural(len(self.recorded), 'tool result')}, turns "
                        f"{state['turns']} and no pendingToolUse.")
            pending = state["pendingToolUse"]
            disk = self.describe_disk()
            left = ""
            temps = self.leftovers()
            if temps and point.kind in ("torn_write", "killed_before_rename"):
                left = (f" The temp file {temps[0]} it left behind is harmless: resume reads only "
                        "checkpoint.json.")
            if pending is not None:
                return (f"{self.done}: {disk}, so resume can reconcile the call that was in "
                        f"flight.{left}")
            return f"{self.done}: {disk}, with every finished tool call recorded.{left}"
        text = notes[0] if notes else "nothing to check"
        return f"{self.done}: {text}."


def _kind(kind) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    names = {int: "an integer", str: "a string", list: "a list", float: "a number"}
    return " or ".join(names.get(k, k.__name__) for k in kinds)


def check(obs: Observation, scenario, point: CrashPoint | str | None = None) -> Verdict:
    """Judge what ``obs`` found on disk at ``point`` of ``scenario``; return a Verdict.

    ``scenario`` is a fake_llm Scenario or its name. ``point`` is the CrashPoint the run was
    killed at (from :func:`graders.crash_points`); an id alone is enough for every kind but the
    torn writes and kills before a rename, whose check compares the file with the saves of a dry
    run.
    """
    if isinstance(scenario, str):
        from fake_llm import load_scenario

        scenario = load_scenario(scenario)
    if point is None:
        point = obs.point
    if isinstance(point, str):
        point = point_from_id(point)
    return _Check(obs, scenario, point).run()
