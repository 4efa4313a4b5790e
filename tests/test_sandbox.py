"""The sandbox and the observer, for real: what student code can and cannot reach when graded.

Each test runs code through :func:`graders.sandbox.record` (bubblewrap + strace, Linux) and
asks it what it could see; the answers come back as the ``MISSING_FIELDS`` of a Level 1 answer
cell, the one value the sandbox's bootstrap reports without judging.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from pathlib import Path

import pytest

from graders.judge.trace import parse_trace
from graders.sandbox import read_safely, record
from graders.sandbox.box import LIMITS, _python, command, find_tools

ROOT = Path(__file__).resolve().parents[1]

pytestmark = [pytest.mark.sandbox, pytest.mark.usefixtures("sandbox_here")]



def facts(code: str, timeout: float = 10) -> list[str]:
    """Run ``code`` (which sets FACTS, a list of strings) in the sandbox; return FACTS."""
    rec = record(code + "\nMISSING_FIELDS = [str(f) for f in FACTS]\n", None,
                 mode="missing_fields", timeout=timeout)
    assert rec.described is not None, (rec.ended, rec.load, rec.stderr_tail)
    return [item["str"] for item in rec.described["items"]]


def test_the_course_the_checkout_and_the_home_folder_are_not_there():
    seen = facts(f"""
import os, sys
paths = [{str(ROOT / 'solutions' / '02_two_latent_failures.py')!r}, {str(ROOT)!r},
         {str(Path.home())!r} + '/.bash_history', '/home', '/etc/passwd', '/work/main']
FACTS = [p for p in paths if os.path.exists(p)]
# the only other things there are the system and the Python that runs the code
for top in os.listdir('/'):
    if top not in ('usr', 'bin', 'lib', 'lib64', 'lib32', 'sbin', 'proc', 'dev', 'tmp', 'work',
                   'grader') and not sys.base_prefix.startswith('/' + top):
        FACTS.append('/' + top)
""")
    assert seen == []


_WRITABLE = """
import os
FACTS = []
for d in ('/usr', '/usr/lib', '/', '/grader', '/work', '/tmp', '/dev', '/dev/shm'):
    try:
        with open(os.path.join(d, 'probe'), 'w') as f:
            f.write('x')
        FACTS.append(d)
    except OSError:
        pass
"""


def test_the_system_is_read_only_and_only_work_and_tmp_are_writable():
    assert facts(_WRITABLE) == ["/work", "/tmp"]


_FACTS_AS_USER = """
import json, sys
from graders.sandbox import record
rec = record(sys.argv[1] + "\\nMISSING_FIELDS = [str(f) for f in FACTS]\\n", None,
             mode="missing_fields")
print(json.dumps([rec.tier, [i["str"] for i in rec.described["items"]]]))
"""


def test_as_a_user_too_only_work_and_tmp_are_writable(tmp_path):
    """Graded by a user (a laptop's bubblewrap with user namespaces), the submission's uid owns
    the sandbox's own root and /dev, two tmpfs with no size: they are read-only, as for root's
    grading, or a submission could fill the grading machine's memory with files there."""
    import json
    import sys

    from tests.conftest import as_user

    os.chmod(tmp_path, 0o777)
    done = subprocess.run(as_user(sys.executable, "-c", _FACTS_AS_USER, _WRITABLE),
                          capture_output=True, text=True, cwd=tmp_path, timeout=120,
                          env=dict(os.environ, HOME=str(tmp_path), PYTHONPATH=str(ROOT)))
    assert done.returncode == 0, done.stderr[-2000:]
    tier, seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert tier == "bubblewrap" and seen == ["/work", "/tmp"], (tier, seen)


def test_tmp_is_another_filesystem_so_a_rename_from_it_fails_as_on_a_real_machine():
    seen = facts("""
import os, errno
with open('/tmp/t', 'w') as f:
    f.write('{}')
try:
    os.replace('/tmp/t', 'checkpoint.json')
    FACTS = ['renamed']
except OSError as e:
    FACTS = [errno.errorcode[e.errno], os.stat('/tmp').st_dev != os.stat('.').st_dev]
""")
    assert seen == ["EXDEV", "True"]


def test_no_network_not_even_loopback_of_the_grading_machine():
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    listener.setblocking(False)
    port = listener.getsockname()[1]
    try:
        seen = facts(f"""
import socket
FACTS = []
for host in ('127.0.0.1', '1.1.1.1'):
    s = socket.socket()
    s.settimeout(1)
    try:
        s.connect((host, {port}))
        FACTS.append('connected ' + host)
    except OSError as e:
        FACTS.append(type(e).__name__)
""")
        assert not any(f.startswith("connected") for f in seen), seen
        with pytest.raises(BlockingIOError):
            listener.accept()
    finally:
        listener.close()


def test_the_environment_is_scrubbed_and_the_user_is_not_the_grader():
    os.environ["CHECKPOINT_LAB_SECRET_FOR_TEST"] = "s3cret"
    try:
        seen = facts("""
import os
FACTS = sorted(os.environ) + ['uid=%d' % os.getuid()]
""")
    finally:
        del os.environ["CHECKPOINT_LAB_SECRET_FOR_TEST"]
    assert "CHECKPOINT_LAB_SECRET_FOR_TEST" not in seen
    assert set(seen) - {f for f in seen if f.startswith("uid=")} <= {
        "PATH", "HOME", "LANG", "PYTHONDONTWRITEBYTECODE", "PYTHONIOENCODING", "LC_CTYPE",
        "PWD"}
    # as root the code runs as a uid of its own; otherwise as the user's: never as root
    assert next(f for f in seen if f.startswith("uid=")) != "uid=0", seen


def test_the_code_sees_the_locale_and_environment_of_lang_c_utf8():
    # the programs before the bootstrap start with no LANG (they load no locale); the code's
    # Python and its children see what LANG=C.UTF-8 gives, as on the grader's own machine
    seen = facts("""
import io, locale, os, subprocess, sys
FACTS = [os.environ.get('LANG'), 'LC_CTYPE' in os.environ, sys.flags.utf8_mode,
         locale.setlocale(locale.LC_ALL, None), locale.getpreferredencoding(False),
         io.text_encoding(None), sys.getfilesystemencoding(), sys.stdout.errors,
         sorted(line.split('=')[0] for line in
                subprocess.run(['env'], capture_output=True, text=True).stdout.split())]
""")
    expected = subprocess.run(
        [_python(), "-I", "-S", "-c", "import io, locale, sys; print(repr([sys.flags.utf8_mode, "
         "locale.setlocale(locale.LC_ALL, None), locale.getpreferredencoding(False), "
         "io.text_encoding(None), sys.getfilesystemencoding(), sys.stdout.errors]))"],
        env={"LANG": "C.UTF-8", "PATH": "/usr/bin:/bin"}, capture_output=True, text=True,
        check=True).stdout.strip()
    assert seen[:2] == ["C.UTF-8", "False"], seen
    assert "[" + ", ".join(seen[2:8]) + "]" == expected.replace("'", ""), (seen, expected)
    assert "LANG" in seen[8] and "LC_CTYPE" not in seen[8], seen


def test_every_process_it_starts_dies_with_it():
    marker = f"{time.time() % 1000:.6f}"
    facts(f"""
import os, subprocess
subprocess.Popen(['sleep', '{marker}'], start_new_session=True)
if os.fork() == 0:
    os.setsid()
    os.execvp('sleep', ['sleep', '{marker}'])
FACTS = ['started']
""")
    deadline = time.monotonic() + 5  # the kernel reaps the namespace's last processes
    while True:
        left = subprocess.run(["pgrep", "-f", f"sleep {marker}"], capture_output=True, text=True)
        if left.stdout.strip() == "" or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert left.stdout.strip() == "", "a process of the submission outlived its sandbox"


_THREAD_FORK_EXEC = """
import os, threading
def in_thread():
    with open('/work/thread.txt', 'w') as f:
        f.write('thread')
t = threading.Thread(target=in_thread)
t.start()
t.join()
pid = os.fork()
if pid == 0:
    with open('/work/fork.txt', 'w') as f:
        f.write('fork')
    os.execv('/bin/sh', ['sh', '-c', 'echo exec > /work/exec.txt'])
os.waitpid(pid, 0)
FACTS = sorted(os.listdir('/work'))
"""


def _strace_version() -> tuple[int, ...]:
    first = subprocess.run([find_tools().strace, "-V"], capture_output=True, text=True).stdout
    return tuple(int(n) for n in first.split()[3].split(".")[:2])


def test_the_observer_follows_threads_forks_and_execs_when_it_stops_only_at_traced_calls(
        tmp_path):
    """With ``--seccomp-bpf`` (strace 5.3+) the kernel picks the calls strace stops at: it
    must still follow (``-f``) a thread, a forked child and what that child execs."""
    cmd = command(find_tools(), run_dir=tmp_path, trace=tmp_path / "trace", fd=3, info_fd=None,
                  mode="loop", sandbox=False, uid=os.geteuid())
    if _strace_version() >= (5, 3):
        assert "--seccomp-bpf" in cmd
    rec = record(_THREAD_FORK_EXEC + "\nMISSING_FIELDS = FACTS\n", None, mode="missing_fields")
    assert rec.described is not None, (rec.ended, rec.load, rec.stderr_tail)
    assert [i["str"] for i in rec.described["items"]] == ["exec.txt", "fork.txt", "thread.txt"]
    writers = {}
    for op in parse_trace(rec.trace, rec.socket_inode):
        if op.call == "write" and isinstance(op.args[0], dict):
            writers.setdefault(op.args[0]["path"], op.pid)
    seen = {name: writers.get(b"/work/" + name.encode()) for name in
            ("thread.txt", "fork.txt", "exec.txt")}
    assert None not in seen.values(), f"writes the trace missed: {seen}"
    assert seen["thread.txt"] != seen["fork.txt"], seen  # a thread and a child, told apart
    assert seen["fork.txt"] == seen["exec.txt"], seen    # an exec keeps its process


def test_a_fork_bomb_stops_at_the_process_limit():
    # For everyone: as root the submission runs as a uid of its own, otherwise as the user's
    # uid, whose other processes count too; either way fork fails before the limit is passed.
    seen = facts("""
import errno, os, time
kids = []
stopped = 'never'
for _ in range(300):
    try:
        pid = os.fork()
    except OSError as e:
        stopped = errno.errorcode.get(e.errno, str(e.errno))
        break
    if pid == 0:
        time.sleep(5)
        os._exit(0)
    kids.append(pid)
FACTS = [len(kids), stopped]
""", timeout=20)
    assert seen[1] == "EAGAIN", f"fork did not fail at the process limit: {seen}"
    assert int(seen[0]) < LIMITS["nproc"], seen


def test_a_hang_is_stopped_at_the_deadline():
    started = time.monotonic()
    rec = record("while True:\n    pass\n", None, mode="missing_fields", timeout=1.5)
    assert rec.ended == "hung"
    assert time.monotonic() - started < 8


def test_read_safely_never_follows_a_link_nor_waits_on_a_fifo(tmp_path):
    (tmp_path / "target").write_text("secret")
    (tmp_path / "checkpoint.json").symlink_to(tmp_path / "target")
    assert read_safely(tmp_path).kind == "symlink"
    (tmp_path / "checkpoint.json").unlink()
    os.mkfifo(tmp_path / "checkpoint.json")
    assert read_safely(tmp_path).kind == "fifo"
    (tmp_path / "checkpoint.json").unlink()
    (tmp_path / "checkpoint.json").write_bytes(b"{}")
    reading = read_safely(tmp_path)
    assert reading.kind == "file" and reading.data == b"{}"
    assert read_safely(tmp_path / "nowhere").kind == "absent"


# -- the channel: calls from any thread or process, numbered and placed by the grader ----------

GIVEN_SAVE = (ROOT / "solutions" / "04_parallel_tool_calls.py").read_text().split(
    "def run_agent")[0]

THREADED_LEVEL4 = GIVEN_SAVE + '''
import threading
from concurrent.futures import ThreadPoolExecutor


def run_agent(task, tools, call_model, execute_tool):
    state = {"version": 1, "task": task, "turns": 0, "tokensUsed": 0,
             "messages": [{"role": "user", "content": task}], "pendingToolUse": None}
    lock = threading.Lock()
    response = call_model(tools=tools, messages=state["messages"])
    state["tokensUsed"] += response["usage"]["output_tokens"]
    while response["stop_reason"] == "tool_use":
        state["messages"].append({"role": "assistant", "content": response["content"]})
        blocks = [b for b in response["content"] if b["type"] == "tool_use"]
        state["pendingToolUse"] = [{"id": b["id"], "name": b["name"], "input": b["input"]}
                                   for b in blocks]
        save_checkpoint(state)
        start = threading.Barrier(len(blocks))

        def run(i):
            start.wait()  # every tool of the turn called at once
            result = execute_tool(blocks[i]["name"], blocks[i]["input"])
            with lock:
                state["pendingToolUse"][i]["result"] = result
                save_checkpoint(state)
            return result

        with ThreadPoolExecutor(len(blocks)) as pool:
            results = list(pool.map(run, range(len(blocks))))
        state["messages"].append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": b["id"], "content": r}
            for b, r in zip(blocks, results)]})
        state["turns"] += 1
        state["pendingToolUse"] = None
        save_checkpoint(state)
        response = call_model(tools=tools, messages=state["messages"])
        state["tokensUsed"] += response["usage"]["output_tokens"]
    return state
'''

FORKED_LEVEL4 = THREADED_LEVEL4.replace(
    '            result = execute_tool(blocks[i]["name"], blocks[i]["input"])\n',
    '''            r, w = os.pipe()
            pid = os.fork()
            if pid == 0:  # the call made from a child process, at the same time as its siblings
                os.write(w, json.dumps(execute_tool(blocks[i]["name"], blocks[i]["input"]))
                         .encode())
                os._exit(0)
            os.close(w)
            with os.fdopen(r) as f:
                result = json.loads(f.read())
            os.waitpid(pid, 0)
''')


@pytest.mark.parametrize("source", [THREADED_LEVEL4, FORKED_LEVEL4], ids=["threads", "forks"])
@pytest.mark.parametrize("scenario_name", ["incident-triage", "release-audit"])
def test_calls_made_at_once_from_threads_or_children_are_each_served_and_placed(
        source, scenario_name):
    from fake_llm import load_scenario
    from graders.judge.matrix import build_matrix

    assert FORKED_LEVEL4 != THREADED_LEVEL4
    scenario = load_scenario(scenario_name)
    rec = record(source, scenario, timeout=30)
    assert rec.ended == "finished", (rec.ended, rec.detail, rec.error, rec.stderr_tail)
    assert rec.protocol == [], "nothing malformed on the channel"
    tools = [c for c in rec.calls if c.op == "tool"]
    assert [c.error for c in tools] == [None] * len(scenario.tool_calls), "every call served"
    assert [c.seq for c in rec.calls] == sorted(c.seq for c in rec.calls)
    assert [f["seq"] for f in rec.frames] == list(range(1, len(rec.frames) + 1))
    matrix = build_matrix(rec, scenario)
    assert matrix.channel == [] and matrix.discrepancies == [], "every call placed in the trace"
    at = matrix.marker_positions()
    assert all(c.seq in at for c in rec.calls)
    served = sorted(rec.calls, key=lambda c: c.seq)
    assert [at[c.seq] for c in served] == sorted(at[c.seq] for c in served), \
        "the trace places the calls in the order the grader served them"
    callers = {op.pid for op in matrix.ops if op.call == "marker" and op.frame["op"] == "tool"}
    assert len(callers) > 1, "the tools were called from more than one thread or process"


def test_a_call_the_trace_does_not_show_is_the_submissions_failure_never_the_graders():
    """A tool call sent with sendmsg alone (untraced) is served, but has no marker: the run
    fails on the channel, with a message; the grader does not record it again as its own
    loss (IncompleteRecording)."""
    from fake_llm import load_scenario
    from graders.judge.matrix import judge

    source = (ROOT / "tests" / "fixtures" / "02_two_latent_failures" / "adversarial" /
              "cheat_untraced_frames.py").read_text()
    scenario = load_scenario("support-tickets")
    rec = record(source, scenario)
    verdicts, matrix = judge(rec, scenario)
    assert matrix.channel and "without the record of your code's system calls" in \
        matrix.channel[0]
    end = verdicts[-1]
    assert not end.passed and end.evidence["problem"] == "grader_channel"
    assert "tool call 1 (list_tickets)" in end.message
    assert not [v for v in verdicts if v.kind == "killed_during_tool"], \
        "a call the trace does not place has no crash point"


# -- what one run may cost the grading process ---------------------------------------------

MANY_CALLS = '''
def save_checkpoint(state):
    pass


def run_agent(task, tools, call_model, execute_tool):
    response = call_model(tools=tools, messages=[{"role": "user", "content": task}])
    block = next(b for b in response["content"] if b["type"] == "tool_use")
    for _ in range(800):
        execute_tool(block["name"], block["input"])
'''

REWRITES_A_BIG_CHECKPOINT = '''
import json, os

def save_checkpoint(state):
    data = json.dumps(dict(state, padding="x" * (2 << 20))).encode()
    fd = os.open("checkpoint.json", os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    for start in range(0, len(data), 8192):
        os.write(fd, data[start:start + 8192])
    os.close(fd)


def run_agent(task, tools, call_model, execute_tool):
    save_checkpoint({"task": task})
'''


@pytest.mark.parametrize(("source", "said"), [
    (MANY_CALLS, "made more than 500 model and tool calls"),
    (REWRITES_A_BIG_CHECKPOINT, "would hold more than 256 MB of copies of it"),
], ids=["calls", "replay"])
def test_a_run_over_budget_is_the_submissions_failure_with_a_message(source, said):
    from fake_llm import load_scenario
    from graders.judge.matrix import judge

    scenario = load_scenario("support-tickets")
    verdicts, matrix = judge(record(source, scenario, timeout=30), scenario)
    assert matrix is None and len(verdicts) == 1
    [verdict] = verdicts
    assert not verdict.passed and verdict.evidence["problem"] == "over_budget"
    assert said in verdict.message and "nothing of it was graded" in verdict.message


#: What grading Level 2 (two runs at once) may take of the grading process's memory at most.
MEMORY_BOUND = 256 << 20

#: The peak is this process's own high-water mark (VmHWM), not ru_maxrss: Linux carries
#: ru_maxrss over an exec, so a child of a big pytest process starts with pytest's size.
_GRADE_IN_A_CHILD = """
import json, re, sys
from pathlib import Path
from graders.checks import grade_submission
results = grade_submission(open(sys.argv[1]).read(), "02_two_latent_failures")
kb = int(re.search(r"VmHWM:\\s+(\\d+) kB", Path("/proc/self/status").read_text()).group(1))
print(json.dumps({"peak": kb * 1024,
                  "results": {k: [r.passed, r.message] for k, r in results.items()}}))
"""


def test_a_huge_checkpoint_saved_at_every_call_costs_the_grader_little_memory():
    """The cheat saves 7 MiB at every call and calls a tool thousands of times; graded in a child
    process (in the sandbox, as always), that child's peak memory stays under the bound (the old
    grader reached 2.7 GB here, and 8.2 GB with the full size)."""
    import json
    import sys

    cheat = (ROOT / "tests" / "fixtures" / "02_two_latent_failures" / "adversarial" /
             "cheat_huge_checkpoint_every_call.py")
    proc = subprocess.run([sys.executable, "-c", _GRADE_IN_A_CHILD, str(cheat)], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout.splitlines()[-1])
    assert out["peak"] < MEMORY_BOUND, f"peak {out['peak'] >> 20} MB"
    for check_id, (passed, message) in out["results"].items():
        assert not passed, check_id
        assert "The grader bounds what one run may cost it" in message, message


# -- the defects of issue 20: one reading of the mode, the missing tool named, a failed start ---

_WHERE_IT_RAN = "import os\nMISSING_FIELDS = {os.getcwd()}\n"


@pytest.mark.parametrize("value", ["0", "no", "false", "off", "OFF"])
def test_every_way_to_turn_the_sandbox_off_turns_it_off_for_level_1s_missing_fields_too(
        monkeypatch, value):
    """CHECKPOINT_LAB_SANDBOX is read one way everywhere: Level 1's MISSING_FIELDS cell runs
    unconfined (strace alone, in a real folder) for every value that means off, as the other
    checks do, and in the sandbox's /work otherwise."""
    from graders.checks.incomplete_checkpoint import evaluate_answer_cell

    monkeypatch.setenv("CHECKPOINT_LAB_SANDBOX", value)
    [where] = [item["str"] for item in evaluate_answer_cell(_WHERE_IT_RAN)["items"]]
    assert where != "/work" and where.endswith("/work"), where
    monkeypatch.setenv("CHECKPOINT_LAB_SANDBOX", "on")
    assert evaluate_answer_cell(_WHERE_IT_RAN)["items"] == [{"str": "/work"}]


def test_a_missing_prlimit_is_reported_as_itself_not_as_a_missing_bubblewrap():
    from graders.sandbox import box

    tools = box.find_tools()
    problem = box.sandbox_problem(box.Tools(tools.strace, tools.bwrap, None, tools.setpriv))
    assert problem and "prlimit" in problem and "util-linux" in problem, problem
    assert "bwrap" not in problem and "bubblewrap" not in problem, problem


def test_a_run_that_fails_to_start_raises_its_own_error_and_leaves_nothing_open(monkeypatch):
    """A sandbox whose command cannot start (here: prlimit, the first program of its command,
    is not where it was found) raises that error, not one of its own cleanup, and closes its
    socket and pipes."""
    import graders.sandbox.session as session

    tools = session.find_tools()
    monkeypatch.setattr(session, "find_tools", lambda: tools.__class__(
        tools.strace, tools.bwrap, "/nonexistent/prlimit", tools.setpriv))
    before = set(os.listdir("/proc/self/fd"))
    with pytest.raises(FileNotFoundError, match="/nonexistent/prlimit"):
        record("def save_checkpoint(s): pass\ndef run_agent(*a): pass\n", None,
               mode="missing_fields", sandbox=False, timeout=5)
    left = set(os.listdir("/proc/self/fd")) - before
    assert not left, {fd: os.readlink(f"/proc/self/fd/{fd}") for fd in left
                      if os.path.exists(f"/proc/self/fd/{fd}")}


_MODULES_WHEN_GRADING = """
import json, sys
from graders.checks import grade_submission
results = grade_submission(open(sys.argv[1]).read(), "02_two_latent_failures")
print(json.dumps([sorted(sys.modules), {k: r.passed for k, r in results.items()}]))
"""


def test_grading_in_the_sandbox_loads_nothing_of_the_in_process_observers():
    """Record, then judge: sandboxed grading chooses its observer in the grading layer and never
    loads the in-process recorder or the forking harness (restarts and the full disk included:
    the hidden checks run them)."""
    import json
    import sys

    proc = subprocess.run([sys.executable, "-c", _MODULES_WHEN_GRADING,
                           str(ROOT / "solutions" / "02_two_latent_failures.py")],
                          cwd=ROOT, capture_output=True, text=True, timeout=600,
                          env={k: v for k, v in os.environ.items()
                               if not k.startswith("CHECKPOINT_LAB_")})
    assert proc.returncode == 0, proc.stderr[-2000:]
    modules, passed = json.loads(proc.stdout.splitlines()[-1])
    assert passed and all(passed.values()), passed
    assert "graders.grading.recorded" in modules and "graders.judge.matrix" in modules
    assert not [m for m in modules if m.startswith("graders.inprocess")]
