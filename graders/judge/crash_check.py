"""The rules every check of a crash state applies before it reads the checkpoint's own shape:
how the run ended, whether checkpoint.json is there and readable, which save a torn write left,
its fields' types, version and task, and what a finished run must hold.

A subclass (:mod:`graders.judge.checkpoint_rules`, :mod:`graders.judge.parallel_rules`) gives
:meth:`CrashCheck.fields` and :meth:`CrashCheck.protocol` for its shape of ``pendingToolUse``.
"""

from __future__ import annotations

import json
from typing import Any

from graders.judge.check_state import (
    FIELD_TYPES,
    WRITE_KINDS,
    CheckState,
    byte_count,
    load_error_verdict,
    script_of,
    skipped_verdict,
    type_words,
)
from graders.judge.crash_points import NO_CRASH, point_from_id
from graders.judge.disk_model import UNFOLLOWED
from graders.judge.recording import Verdict
from graders.load_errors import describe_error
from graders.loop.protocol import CHECKPOINT, SIX_FIELDS
from graders.text import plural

__all__ = ["CrashCheck"]


def _first_off_script(messages: list, script: dict) -> int | None:
    """The index of the first message that is not the script's (as the API reads it), or None."""
    from fake_llm.normalize import canonical_message

    canonical, conversation = script["canonical"], script["conversation"]
    for i, message in enumerate(messages):
        if i >= len(conversation) or canonical_message(message) != canonical[i]:
            return i
    return None


class CrashCheck(CheckState):
    """One check of one crash state, up to the rules of one checkpoint shape."""

    def fields(self) -> bool:
        """Check the six fields; False if there is no point in going on."""
        raise NotImplementedError

    def protocol(self) -> None:
        """Check pendingToolUse and messages against the ledger of what really ran."""
        raise NotImplementedError

    def follows_the_script(self, messages: list) -> bool:
        """Each message is the one the model and tools produced, as the API reads it (a turn's
        results paired with its calls by tool_use_id, in any order)."""
        script = script_of(self.sc)
        i = self.once("script", messages, lambda: _first_off_script(messages, script))
        if i is None:
            return True
        script = script["conversation"]
        want = (json.dumps(script[i])[:200] if i < len(script)
                else "nothing: the conversation had ended")
        self.fail("script_mismatch", (
            f"{self.done}: messages[{i}] in checkpoint.json is "
            f"{json.dumps(messages[i])[:200]}, but the model and tools produced {want}. "
            "messages must hold the conversation as it happened (as the API reads it): "
            "the model's content as it came, each tool result as the tool returned it."))
        return False

    def api_error(self, messages: list):
        """The first of the Messages API's rules ``messages`` breaks (a ``ConversationError``,
        the calls in flight allowed), or None."""
        from fake_llm import ConversationError, validate_conversation

        def work():
            try:
                validate_conversation(messages, script_of(self.sc)["tools"], allow_pending=True)
            except ConversationError as err:
                return err
            return None

        return self.once("api", messages, work)

    def no_trace_message(self, k: int, on_disk: str) -> tuple[str, str]:
        """The problem of tool ``k``, which ran and left no trace: never on record, or only
        after it had returned."""
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

    # -- the checks, in the order a student should fix them --------------------------------

    @classmethod
    def judging(cls, obs, scenario, point=None):
        """This check of ``obs`` at ``point`` of ``scenario`` (a Scenario or its name; a
        CrashPoint, its id, or None for the observation's own point)."""
        if isinstance(scenario, str):
            from fake_llm import load_scenario

            scenario = load_scenario(scenario)
        if point is None:
            point = obs.point
        if isinstance(point, str):
            point = point_from_id(point)
        return cls(obs, scenario, point)

    def each_call_answered_once(self, messages: list) -> bool:
        """No tool call's result is in ``messages`` twice (the API would refuse that)."""
        counts = self.count_results(messages)
        twice = [tid for tid, c in counts.items() if c > 1]
        if twice:
            k = self.call_number(twice[0])
            self.fail("recorded_twice", (
                f"{self.done}: messages record the result of tool {k or twice[0]} "
                f"{counts[twice[0]]} times. Each tool call is recorded exactly once; the API "
                "would refuse a conversation that answers one call twice."))
            return False
        return True

    def run(self) -> Verdict:
        """Every check, in order, and the verdict."""
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
        """Check what the crash left on disk: there, readable, the fields, the protocol."""
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
        """There was no checkpoint.json: say whether that is right at this point, or why not."""
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
                f"({byte_count(obs.files[temp])} bytes). Your save writes a temp file that never "
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
        """checkpoint.json does not parse: a torn write (in place, a copy, a short write), or a
        state the grader could not follow."""
        obs, point = self.obs, self.point
        what = obs.parse_error
        if UNFOLLOWED in what or "could not follow" in what:
            self.fail("unobserved_write", (
                f"{self.done}: checkpoint.json {what}. The grader judges every state a crash "
                "could leave by replaying your file operations; this one it could not replay, so "
                "it cannot count this state as safe."))
            return
        if point.kind == "torn_write":
            self.torn_write(what)
            return
        self.fail("invalid_json", f"{self.done}: checkpoint.json "
                  f"({byte_count(obs.checkpoint_bytes)} bytes) {what}. Resume would fail on "
                  "json.load before it read anything.")

    def torn_write(self, what: str) -> None:
        """The message of a torn write: what the save was writing, and what it left."""
        obs, point = self.obs, self.point
        save = point.save or {}
        expected = point.tear_expected
        held = (f"checkpoint.json held {byte_count(obs.checkpoint_bytes)} of its "
                f"{byte_count(expected)} bytes and {what.split(' (')[0]}")
        self.evidence.update(bytes_on_disk=obs.checkpoint_bytes, bytes_expected=expected)
        opened = save.get("opened", [])
        linked = self.temp_is_checkpoint(save)
        if CHECKPOINT in opened and opened.index(CHECKPOINT) > 0:
            self.fail("copy_over", (
                f"{self.done}: {held}. Your save writes a temp file, then copies it over "
                "checkpoint.json: the copy is itself an in-place write, and it was cut off "
                "part way, a torn write. Resume would fail on json.load, and this file was the "
                "task's only copy."))
        elif CHECKPOINT in opened or linked:
            how = (f"Your save's temp file {linked} and checkpoint.json were one file with two "
                   "names (a hard link), so writing the temp file rewrote checkpoint.json itself, "
                   "and renaming one name of a file over another does nothing. "
                   if linked else "")
            self.fail("in_place_write", (
                f"{self.done}: {held}: a torn write. {how}The save was overwriting "
                f"checkpoint.json in place when it was cut off, so the task's only copy "
                f"{self.what_is_left()}. Resume would fail on json.load."))
        else:
            self.fail("partial_write", (
                f"{self.done}: {held}. The write to the temp file was cut short, and your "
                "save renamed it over checkpoint.json anyway (os.write may write fewer bytes "
                "than it was given). Resume would fail on json.load."))

    def temp_is_checkpoint(self, save: dict) -> str | None:
        """The temp file this save renames over checkpoint.json, when it is still there with as
        many bytes as checkpoint.json: two names of one file (a hard link), or None."""
        for src, dst in save.get("renames", []):
            if dst == CHECKPOINT and src in self.obs.files and src != CHECKPOINT and \
                    self.obs.files[src] == self.obs.checkpoint_bytes:
                return src
        return None

    def what_is_left(self) -> str:
        """What an in-place torn write left: a prefix of the new save when opening the file had
        emptied it, else part new, part old."""
        now, after = self.obs.checkpoint or "", self.point.after
        if after is not None and not now:
            return ("holds neither the new save nor the old one: opening the file for writing "
                    "had emptied it")
        if after is not None and after.startswith(now):
            return ("holds only the start of the new save and none of the old one (opening the "
                    "file for writing had emptied it)")
        return "is part new save, part old save, or part missing"

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

    def shape_is_right(self) -> bool:
        """An object with the six fields, five of them of the right type."""
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
        for name, kind in FIELD_TYPES.items():
            value = state[name]
            if not isinstance(value, kind) or isinstance(value, bool):
                self.fail("bad_field", f"{self.done}: in checkpoint.json, {name} is "
                          f"{json.dumps(value)[:80]}, not {type_words(kind)}.")
                return False
        return True

    def identity_is_right(self) -> bool:
        """Version 1, and the run's own task."""
        state = self.state
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
