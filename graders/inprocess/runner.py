"""The runner: a fresh ``python`` per submission; loads it once, forks a child per crash point.

Started by :mod:`graders.inprocess.runner_backend` as ``python -S -u -m graders.inprocess.runner
IN_FD OUT_FD`` in its own session. It speaks JSON lines on the two pipe descriptors it is given
(never on stdout, which the submission may print to):

- on start: ``{"ready": true}``;
- ``{"op": "load", "source", "filename", "name"}`` -> ``{"ok": true}`` or
  ``{"ok": false, "stage", "error"}``;
- ``{"op": "run", "scenario", "plans", "timeout", "jobs"}`` -> one ``{"id", "status"}`` line per
  plan as its child ends, then ``{"done": true}``;
- ``{"op": "quit"}``, or end of input: exit.

The runner reads nothing from the children's working directories: the harness does that.
"""

from __future__ import annotations

import gc
import json
import linecache
import os
import sys
import types

from graders.inprocess import child as _child
from graders.inprocess.waiting import run_children
from graders.load_errors import REQUIRED

_ASYNC = 0x80 | 0x200  # CO_COROUTINE | CO_ASYNC_GENERATOR (inspect costs 20 ms to import)
_loads = json.loads
_dumps = json.dumps
_write = os.write
_mkdir = os.mkdir


_PRISTINE = {name: getattr(json, name) for name in
             ("load", "loads", "dump", "dumps", "JSONDecoder", "JSONEncoder", "JSONDecodeError")}


def _load_scenario(load_scenario, name: str):
    """Load a scenario with the json module as it was before the submission ran."""
    theirs = {name: getattr(json, name) for name in _PRISTINE}
    for attr, value in _PRISTINE.items():
        setattr(json, attr, value)
    try:
        return load_scenario(name)
    finally:
        for attr, value in theirs.items():
            setattr(json, attr, value)


def warm_up(scenario) -> None:
    """Run the scenario's script once here, so every forked child starts with warm caches."""
    messages = scenario.conversation()
    call_model, execute_tool = scenario.model(), scenario.executor()
    for turn in range(1, len(scenario.tool_calls) + 2):
        call_model(tools=scenario.tools, messages=messages[: 2 * turn - 1])
    for call in scenario.tool_calls:
        execute_tool(call["name"], call["input"])


def _send(fd: int, message: dict) -> None:
    data = memoryview((_dumps(message) + "\n").encode())
    while data:
        data = data[_write(fd, data):]


def _hide_the_harness() -> None:
    """Take the harness's own modules out of the submission's reach by name.

    After this, ``import graders.inprocess.child`` (or ``import __main__``) in the submission gets a
    fresh copy, and patching it changes nothing the runner and its children use. A submission that
    walks frames or the garbage collector can still find them; what it cannot reach is the process
    that reads the disk and decides.
    """
    for module_name in [m for m in sys.modules if m == "graders" or m.startswith("graders.")]:
        del sys.modules[module_name]
    sys.modules["__main__"] = types.ModuleType("__main__")


def load(source: str, filename: str, name: str) -> tuple[dict | None, dict]:
    """Execute ``source`` as a fresh module; return (namespace or None, reply)."""
    lines = source.splitlines(keepends=True)
    linecache.cache[filename] = (len(source), None, lines, filename)
    try:
        code = compile(source, filename, "exec", dont_inherit=True)
    except SyntaxError as exc:
        return None, {"ok": False, "stage": "syntax",
                      "error": _child.summarize_exception(exc, {filename})}
    module = types.ModuleType(name)
    module.__file__ = filename
    namespace = module.__dict__
    _hide_the_harness()
    try:
        exec(code, namespace)
    except BaseException as exc:  # noqa: BLE001 - anything their top level raises, SystemExit too
        return None, {"ok": False, "stage": "import",
                      "error": _child.summarize_exception(exc, {filename})}
    missing = [f for f in REQUIRED if f not in namespace]
    if missing:
        return None, {"ok": False, "stage": "missing", "missing": missing}
    not_callable = [f for f in ("save_checkpoint", "run_agent") if not callable(namespace[f])]
    if not_callable:
        return None, {"ok": False, "stage": "not_callable", "names": not_callable,
                      "types": [type(namespace[f]).__name__ for f in not_callable]}
    asynchronous = [f for f in ("save_checkpoint", "run_agent")
                    if getattr(getattr(namespace[f], "__code__", None), "co_flags", 0) & _ASYNC]
    if asynchronous:
        return None, {"ok": False, "stage": "async", "functions": asynchronous}
    return namespace, {"ok": True}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    in_fd, out_fd = int(argv[0]), int(argv[1])
    requests = open(in_fd, "rb", closefd=False)  # noqa: SIM115 - lives as long as the runner
    from fake_llm import load_scenario  # before the submission runs: it cannot stand in for it

    _send(out_fd, {"ready": True})  # the load timeout counts from here: their code only

    namespace = None
    filename = "<submission>"
    scenarios: dict[str, object] = {}
    for line in requests:
        request = _loads(line)
        op = request.get("op")
        if op == "quit":
            break
        try:
            namespace, filename = _serve(request, op, namespace, filename, scenarios, load_scenario,
                                         in_fd, out_fd)
        except Exception as exc:  # noqa: BLE001 - tell the harness rather than die silently
            _send(out_fd, {"error": f"{type(exc).__name__}: {exc}"[:2000]})
    return 0


def _serve(request, op, namespace, filename, scenarios, load_scenario, in_fd, out_fd):
    """Answer one request; return the (possibly new) namespace and file name."""
    if op == "load":
        filename = request["filename"]
        namespace, reply = load(request["source"], filename, request.get("name", "submission"))
        _send(out_fd, reply)
        return namespace, filename
    if op != "run":
        _send(out_fd, {"error": f"unknown op {op!r}"})
        return namespace, filename
    if namespace is None:
        _send(out_fd, {"error": "nothing loaded"})
        return namespace, filename
    name = request["scenario"]
    if name not in scenarios:
        scenarios[name] = _load_scenario(load_scenario, name)
        try:
            warm_up(scenarios[name])
        except Exception:  # noqa: BLE001 - only an optimisation; the children will tell
            pass
        gc.freeze()  # children inherit these objects without the collector touching their pages
    kit = _child.Kit(scenarios[name])
    lines = {filename: linecache.getlines(filename)}

    def start(plan):
        _mkdir(plan["base"])
        _mkdir(plan["cwd"])
        _mkdir(plan["hdir"])
        return _child.fork_child(namespace, kit, plan, plan["cwd"], plan["hdir"],
                                 filenames=(filename,), source_lines=lines,
                                 close_fds=(in_fd, out_fd))

    for plan, status in run_children(start, request["plans"], float(request["timeout"]),
                                     int(request.get("jobs", 1))):
        _send(out_fd, {"id": plan["id"], "status": status})
    _send(out_fd, {"done": True})
    return namespace, filename


if __name__ == "__main__":
    code = main()
    _child._exit(code)  # never wait for threads the submission may have started
