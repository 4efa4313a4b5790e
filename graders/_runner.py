"""The runner: a fresh ``python`` per submission; loads it once, forks a child per crash point.

Started by :mod:`graders.harness` as ``python -S -u -m graders._runner IN_FD OUT_FD`` in its own
session. It speaks JSON lines on the two pipe descriptors it is given (never on stdout, which the
submission may print to):

- ``{"op": "load", "source", "filename", "name"}`` -> ``{"ok": true}`` or
  ``{"ok": false, "stage", "error"}``;
- ``{"op": "run", "scenario", "plans", "timeout", "jobs"}`` -> one ``{"id", "status"}`` line per
  plan as its child ends, then ``{"done": true}``;
- ``{"op": "quit"}``, or end of input: exit.

The runner reads nothing from the children's working directories: the harness does that.
"""

from __future__ import annotations

import inspect
import json
import linecache
import os
import sys
import types

from graders import _child

_loads = json.loads
_dumps = json.dumps
_write = os.write
_makedirs = os.makedirs


def _send(fd: int, message: dict) -> None:
    data = memoryview((_dumps(message) + "\n").encode())
    while data:
        data = data[_write(fd, data):]


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
    try:
        exec(code, namespace)
    except BaseException as exc:  # noqa: BLE001 - anything their top level raises, SystemExit too
        return None, {"ok": False, "stage": "import",
                      "error": _child.summarize_exception(exc, {filename})}
    missing = [f for f in ("save_checkpoint", "run_agent") if not callable(namespace.get(f))]
    if missing:
        return None, {"ok": False, "stage": "missing", "missing": missing}
    asynchronous = [f for f in ("save_checkpoint", "run_agent")
                    if inspect.iscoroutinefunction(namespace[f])]
    if asynchronous:
        return None, {"ok": False, "stage": "async", "functions": asynchronous}
    return namespace, {"ok": True}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    in_fd, out_fd = int(argv[0]), int(argv[1])
    requests = open(in_fd, "rb", closefd=False)  # noqa: SIM115 - lives as long as the runner
    import fake_llm  # before the submission runs, so it cannot stand in for it

    namespace = None
    filename = "<submission>"
    scenarios: dict[str, object] = {}
    for line in requests:
        request = _loads(line)
        op = request.get("op")
        if op == "quit":
            break
        if op == "load":
            filename = request["filename"]
            namespace, reply = load(request["source"], filename, request.get("name", "submission"))
            _send(out_fd, reply)
        elif op == "run":
            if namespace is None:
                _send(out_fd, {"error": "nothing loaded"})
                continue
            name = request["scenario"]
            if name not in scenarios:
                scenarios[name] = fake_llm.load_scenario(name)
            scenario = scenarios[name]
            lines = {filename: linecache.getlines(filename)}

            def start(plan, scenario=scenario, lines=lines, namespace=namespace,
                      filename=filename):
                _makedirs(plan["cwd"], exist_ok=True)
                _makedirs(plan["hdir"], exist_ok=True)
                return _child.fork_child(namespace, scenario, plan, plan["cwd"], plan["hdir"],
                                         filenames=(filename,), source_lines=lines,
                                         close_fds=(in_fd, out_fd))

            for plan, status in _child.run_children(start, request["plans"],
                                                    float(request["timeout"]),
                                                    int(request.get("jobs", 1))):
                _send(out_fd, {"id": plan["id"], "status": status})
            _send(out_fd, {"done": True})
        else:
            _send(out_fd, {"error": f"unknown op {op!r}"})
    return 0


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    os._exit(code)  # never wait for threads the submission may have started
