"""The course in a browser tab: ``checkpoint-lab site`` builds a JupyterLite site, and the site
runs the lessons and the self-checks on Pyodide with nothing installed and no network.

The site is built once per session (downloads cached in ``.site-cache/``, so CI pays them once),
served by ``python -m http.server`` on loopback, and driven in Debian's Chromium through
Playwright. Every request the browser makes is logged: none may leave loopback. The first kernel
start (a fresh browser profile: nothing cached) is timed and written to
``test-artifacts/site/timings.json``.

In Chromium: Lesson 02 runs top to bottom, its timeline answers a click; Level 2's self-check
gives the verdicts ``checkpoint-lab check`` gives, for the starter and the reference; ``hint()``
answers; the downloaded notebook is graded by ``checkpoint-lab grade``. Under Node, on the
site's own Pyodide (``tests/pyodide_runner``): every lesson runs top to bottom and every
exercise's self-check fails the starter and passes the reference. The tests without either hold
the parts the site rests on: what the build writes, and the course's own fallbacks for a Python
without fork, threads or matplotlib.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
import zipfile
from pathlib import Path
from urllib.parse import urlparse

import pytest

from tests.conftest import IN_CI, ROOT

ARTIFACTS = ROOT / "test-artifacts" / "site"
LESSON = "lessons/02_two_save_points.ipynb"
LEVEL2 = "02_two_latent_failures"
EXERCISE = f"exercises/lesson2/{LEVEL2}.ipynb"
COMMAND = str(Path(sys.executable).with_name("checkpoint-lab"))
KERNEL_START_MS = 240_000
RUN_MS = 240_000


# -- the build ----------------------------------------------------------------------------------


def _missing_build_tool() -> str | None:
    if shutil.which("npm") is None:
        return "npm is not installed (the site takes Pyodide from the npm registry): apt-get " \
               "install npm"
    try:
        import jupyterlite_core  # noqa: F401
        import pyodide_lock  # noqa: F401
    except ImportError as err:
        return f"the site's build tools are missing ({err.name}): pip install -e '.[site]'"
    return None


@pytest.fixture(scope="session")
def site(tmp_path_factory) -> Path:
    """The course's site, built once by the real command into a temporary folder: first the
    downloads (into ``.site-cache/``, from npm and PyPI), then the build itself with no network
    at all (a network namespace of its own, where this machine can make one)."""
    from graders.site.build import default_cache
    from graders.site.fetch import kernel_wheels, pyodide_files

    reason = _missing_build_tool()
    if reason:
        if IN_CI:
            pytest.fail(f"CI=true and {reason}", pytrace=False)
        pytest.skip(reason)
    cache = default_cache(ROOT)
    kernel_wheels(cache)
    pyodide_files(cache, tmp_path_factory.mktemp("pyodide-files"))
    offline = ["unshare", "--map-root-user", "--net"]
    if subprocess.run([*offline, "true"], capture_output=True).returncode != 0:
        offline = []  # no user namespaces here: build with the network the machine has
    out = tmp_path_factory.mktemp("site") / "site"
    done = subprocess.run([*offline, COMMAND, "site", "-o", str(out)], capture_output=True,
                          text=True, cwd=ROOT, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"Built the course's site in {out}" in done.stdout, done.stdout
    return out


def _config(site: Path) -> dict:
    config = json.loads((site / "jupyter-lite.json").read_text())["jupyter-config-data"]
    return config["litePluginSettings"]["@jupyterlite/pyodide-kernel-extension:kernel"]


@pytest.mark.install
def test_the_site_serves_pyodide_and_every_wheel_itself(site):
    kernel = _config(site)
    assert kernel["pyodideUrl"] == "./static/pyodide/pyodide.mjs"
    assert kernel["disablePyPIFallback"] is True
    folder = site / "static" / "pyodide"
    for name in ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip"):
        assert (folder / name).stat().st_size > 10_000, name
    lock = json.loads((folder / "pyodide-lock.json").read_text())
    assert lock["info"]["python"].startswith("3.14")
    for name, entry in lock["packages"].items():
        wheel = folder / entry["file_name"]
        assert wheel.exists(), f"{name}: the lockfile names {entry['file_name']}, not in the site"
        assert hashlib.sha256(wheel.read_bytes()).hexdigest() == entry["sha256"], name
        missing = [d for d in entry["depends"] if d not in lock["packages"]]
        assert not missing, f"{name} depends on {missing}, which the site does not serve"
    # Every package is loaded when the kernel starts: nothing is left for micropip to look up.
    assert sorted(kernel["loadPyodideOptions"]["packages"]) == sorted(lock["packages"])
    for needed in ("ipython", "ipywidgets", "comm", "pyodide-kernel", "piplite", "micropip",
                   "checkpoint-lab"):
        assert needed in lock["packages"], needed


@pytest.mark.install
def test_the_site_answers_the_browsers_favicon_request(site):
    assert (site / "favicon.ico").read_bytes()[:4] == b"\x00\x00\x01\x00"  # an ICO file


@pytest.mark.install
def test_the_site_names_no_host_but_its_own(site):
    texts = [site / "jupyter-lite.json", site / "static" / "pyodide" / "pyodide-lock.json"]
    for path in texts:
        assert not re.search(r"https?://", path.read_text()), f"{path.name} names a host"


@pytest.mark.install
def test_the_site_holds_every_released_notebook_for_the_browser_kernel(site):
    from graders.workspace.notebooks import released_notebooks

    for released in released_notebooks(ROOT):
        from graders.workspace.links import relink

        copy = json.loads((site / "files" / released.relpath).read_text())
        original = relink(json.loads(released.source.read_text()),
                          f"{released.source.parent.name}/{released.source.name}")
        assert copy["metadata"]["kernelspec"]["name"] == "python", released.relpath
        assert copy["cells"] == original["cells"], released.relpath  # links as in a workspace


@pytest.mark.install
def test_the_course_wheel_holds_the_packages_and_asks_only_for_ipywidgets(site):
    wheel = next((site / "static" / "pyodide").glob("checkpoint_lab-*.whl"))
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        metadata = next(archive.read(n).decode() for n in names if n.endswith("/METADATA"))
    assert "graders/checks/selfcheck.py" in names and "fake_llm/model.py" in names
    assert "graders/data/teaching/parallel_turn_events.json" in names  # lesson 05's turn
    assert not _not_for_students(names), _not_for_students(names)
    assert not any(n.endswith(".pyc") or "__pycache__" in n for n in names)
    assert re.findall(r"^Requires-Dist: (.*)$", metadata, re.M) == ["ipywidgets"]


def _run_live() -> set[str]:
    """The scenarios a student's kernel runs: a visible check's, and each one a lesson's code (or
    the teaching code a lesson calls) names, except those lesson 05 shows from its recording
    (`graders.teaching.parallel_turn.RecordedShape`)."""
    import ast

    from fake_llm import list_scenarios
    from graders.checks import CHECKS

    texts = [(ROOT / "graders" / "teaching").glob("*.py")]
    sources = [p.read_text() for group in texts for p in group]
    for lesson in sorted((ROOT / "lessons").glob("*.ipynb")):
        sources += ["".join(c["source"]) for c in json.loads(lesson.read_text())["cells"]
                    if c["cell_type"] == "code"]
    named = {node.value for text in sources for node in ast.walk(ast.parse(text))
             if isinstance(node, ast.Constant) and isinstance(node.value, str)}
    recorded = set(json.loads(
        (ROOT / "graders" / "data" / "teaching" / "parallel_turn_events.json").read_text()))
    visible = {c.scenario for c in CHECKS.values() if not c.hidden and c.scenario}
    return visible | ((named & set(list_scenarios())) - recorded)


def test_the_course_wheel_carries_each_scenario_a_student_runs_and_no_other(tmp_path):
    """Issue 28 item 4: long-migration stays in the site's wheel because lesson 01 runs the
    lesson's loop on it (its max-turns and tokensUsed cells); release-audit, which only hidden
    checks run and lesson 05 shows from its recording, is left out; nothing else rides along."""
    from graders.site.course_wheel import write_course_wheel

    wheel = write_course_wheel(ROOT, tmp_path, "0.0.0")
    with zipfile.ZipFile(wheel) as archive:
        carried = {Path(n).stem for n in archive.namelist()
                   if n.startswith("fake_llm/scenarios/") and n.endswith(".json")}
    assert "long-migration" in _run_live() and "release-audit" not in _run_live()
    assert carried == _run_live()


def _not_for_students(names) -> list[str]:
    """What in a wheel's file names a student must not get (issue 29 item 7): any solution, and
    any scenario that only hidden checks use (a scenario a lesson runs live stays)."""
    from graders.checks import CHECKS

    live_in_lessons = _run_live()
    visible = {c.scenario for c in CHECKS.values() if not c.hidden}
    hidden_only = {c.scenario for c in CHECKS.values() if c.hidden} - visible - live_in_lessons
    return sorted(n for n in names
                  if n.startswith("solutions/") or "/solutions/" in n
                  or ".written_answers" in n or ".walkthrough" in n
                  or any(n == f"fake_llm/scenarios/{s}.json" for s in hidden_only))


def test_the_course_wheel_holds_no_solution_and_no_hidden_check_scenario(tmp_path):
    """The wheel as the site build writes it, opened: no solution, no scenario that only hidden
    checks use; lesson 05 still shows release-audit's turns from the recording alone."""
    from fake_llm.scenario import SCENARIO_DIR
    from graders.site.course_wheel import WITHHELD, write_course_wheel
    from graders.teaching import parallel_turn

    wheel = write_course_wheel(ROOT, tmp_path / "wheel", "0.0.0")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        archive.extractall(tmp_path / "site-packages")
    assert "graders/checks/selfcheck.py" in names
    assert "fake_llm/scenarios/long-migration.json" in names
    assert "graders/data/teaching/parallel_turn_events.json" in names  # lesson 05's turns
    assert _not_for_students(names) == [], _not_for_students(names)
    assert _not_for_students({*names, *WITHHELD, "solutions/04_parallel_tool_calls.py"})  # can fail
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]);"
        "from graders.teaching.parallel_turn import turn_moments;"
        "import fake_llm, graders; assert fake_llm.__file__.startswith(sys.argv[1]);"
        "assert graders.__file__.startswith(sys.argv[1]);"
        "from fake_llm import list_scenarios;"
        "assert 'release-audit' not in list_scenarios(), list_scenarios();"
        "print(len(turn_moments('release-audit', 4)))")
    run = subprocess.run([sys.executable, "-I", "-c", code, str(tmp_path / "site-packages")],
                         capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-2000:]
    assert int(run.stdout) == len(parallel_turn.turn_moments("release-audit", 4)) > 0
    assert (SCENARIO_DIR / "release-audit.json").exists()  # the desktop course keeps it


def test_the_command_refuses_a_folder_that_is_not_a_site(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    done = subprocess.run([COMMAND, "site", "-o", str(tmp_path), "--cache",
                           str(tmp_path / "cache")], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.startswith(f"checkpoint-lab site: {tmp_path} exists and is not a site "
                                  "this command built"), done.stderr
    assert (tmp_path / "notes.txt").read_text() == "mine"
    assert not (tmp_path / "cache").exists()  # refused before any download



def test_the_pages_workflow_builds_the_site_with_the_same_command_and_cache():
    import yaml

    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "site.yml").read_text())
    steps = workflow["jobs"]["build"]["steps"]
    runs = [step.get("run", "") for step in steps]
    assert "python -m pip install -c constraints.txt -e '.[site]'" in runs
    assert "checkpoint-lab site -o _site" in runs
    cache = next(step["with"] for step in steps if step.get("uses", "").startswith(
        "actions/cache"))
    assert cache["path"] == ".site-cache" and "graders/site/pins.py" in cache["key"]
    upload = next(step for step in steps if "upload-pages-artifact" in step.get("uses", ""))
    assert upload["with"]["path"] == "_site"
    assert workflow["jobs"]["deploy"]["steps"][0]["uses"].startswith("actions/deploy-pages")


def test_the_site_tools_add_no_extension_to_the_courses_own_jupyterlab():
    from jupyter_core.paths import jupyter_path

    found = [str(path) for root in jupyter_path("labextensions")
             for path in Path(root).glob("@jupyterlite/*")]
    assert found == [], f"a JupyterLite extension would load in the desktop JupyterLab: {found}"


def test_a_cached_wheel_is_used_only_with_its_pinned_hash(tmp_path):
    from graders.site.fetch import _cached_wheel

    wheel = tmp_path / "six-1.17.0-py2.py3-none-any.whl"
    wheel.write_bytes(b"not the wheel PyPI gave")
    assert _cached_wheel(tmp_path, "six", "1.17.0", hashlib.sha256(b"x").hexdigest()) is None
    pinned = hashlib.sha256(wheel.read_bytes()).hexdigest()
    assert _cached_wheel(tmp_path, "six", "1.17.0", pinned) == wheel
    assert _cached_wheel(tmp_path, "six", "1.16.0", pinned) is None

# -- the course's fallbacks for a browser's Python ----------------------------------------------


def test_side_by_side_runs_in_turn_where_threads_cannot_start(monkeypatch):
    from graders.parallel import side_by_side

    seen = []
    assert side_by_side(lambda n: seen.append(threading.get_ident()) or n * 2, [1, 2, 3]) == \
        [2, 4, 6]
    assert threading.get_ident() not in seen  # in threads, here
    monkeypatch.setattr(sys, "platform", "emscripten")
    seen.clear()
    assert side_by_side(lambda n: seen.append(threading.get_ident()) or n * 2, [1, 2, 3]) == \
        [2, 4, 6]
    assert set(seen) == {threading.get_ident()}


def test_a_browser_python_takes_the_recorded_route_not_fork(monkeypatch):
    from graders.inprocess.support import unsupported_reason

    assert unsupported_reason() is None
    monkeypatch.setattr(sys, "platform", "emscripten")
    assert unsupported_reason() is not None


def test_the_cost_plot_is_one_line_without_matplotlib(monkeypatch, capsys, tmp_path):
    from graders.teaching.cost import NO_PLOT_NOTE, measure_save_cost, show_save_cost

    measurement = measure_save_cost(turns=2, directory=str(tmp_path))
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    assert show_save_cost(measurement) is None
    assert capsys.readouterr().out.strip() == NO_PLOT_NOTE



def test_a_measurement_in_the_browser_names_the_browser_storage(monkeypatch):
    from graders.teaching.filesystem import Filesystem

    monkeypatch.setattr(sys, "platform", "emscripten")
    assert "in this browser's storage" in Filesystem(Path("/drive/lessons/x")).describe()
    assert "the browser tab's memory" in Filesystem(Path("/tmp/x")).describe()


# -- what a self-check table says ---------------------------------------------------------------

_CHECK_ROW = re.compile(r"^(l\d_[a-z0-9_]+)\s+(PASS|FAIL|not checked|when graded)")
_POINT = re.compile(r"\b(no_crash|(?:torn_write|killed|disk_full|restart|power_cut)_[a-z0-9_]+)\b")


def verdicts(text: str) -> dict[str, tuple[str, frozenset[str]]]:
    """Each visible check in self-check tables: its result and the crash points it names."""
    found: dict[str, tuple[str, set[str]]] = {}
    current = None
    for line in text.splitlines():
        row = _CHECK_ROW.match(line)
        if row:
            current = row.group(1)
            status, points = found.setdefault(current, (row.group(2), set()))
            assert status == row.group(2), f"{current} reads both {status} and {row.group(2)}"
        elif current and line.startswith(" "):
            found[current][1].update(_POINT.findall(line))
        elif not line.strip() or not line.startswith(" "):
            current = None
    return {check: (status, frozenset(points)) for check, (status, points) in found.items()
            if status != "when graded"}


def test_solutions_in_the_browser_say_where_they_are(monkeypatch, capsys):
    from graders.workspace.solutions import solutions

    monkeypatch.setattr(sys, "platform", "emscripten")
    assert solutions(2) is None
    assert "The solutions are not part of this website" in capsys.readouterr().out


# -- every lesson and every self-check on the site's own Pyodide (Node, no browser) -------------

RUNNER = Path(__file__).with_name("pyodide_runner")


def run_in_pyodide(site: Path, jobs: list[dict], scratch: Path) -> dict[str, list[dict]]:
    """Run notebooks (``{"name", "relpath", "file"}``) top to bottom in the site's Pyodide,
    under Node: per name, each code cell's printed text and error."""
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is not installed (npm, which the site needs, comes with it)")
    jobs_file = scratch / "jobs.json"
    jobs_file.write_text(json.dumps(jobs))
    done = subprocess.run([node, str(RUNNER / "run.mjs"), str(site), str(jobs_file),
                           str(RUNNER / "driver.py")], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return {job["name"]: job["cells"] for job in json.loads(done.stdout.splitlines()[-1])}


def _errors(cells: list[dict]) -> list[str]:
    return [f"{c['source'][:80]!r}: {c['error']}\n{c['printed'][-1500:]}" for c in cells
            if c["error"]]


@pytest.mark.install
@pytest.mark.timeout(900)
def test_every_lesson_and_every_self_check_runs_in_the_sites_pyodide(site, tmp_path):
    from graders.checks import NOTEBOOKS, checks_for
    from graders.workspace.notebooks import released_notebooks
    from tests.test_cli_check import with_reference

    jobs = [{"name": r.relpath, "relpath": r.relpath, "file": str(site / "files" / r.relpath)}
            for r in released_notebooks(ROOT)]
    for name in NOTEBOOKS:  # the reference answers in the answer cells, beside the release
        reference = with_reference(name, ROOT / "exercises" / f"{name}.ipynb", tmp_path)
        jobs.append({"name": f"{name} reference", "file": str(reference),
                     "relpath": f"exercises/lesson2/reference/{name}.ipynb"})
    ran = run_in_pyodide(site, jobs, tmp_path)

    for job in jobs:
        assert not _errors(ran[job["name"]]), f"{job['name']}: {_errors(ran[job['name']])}"
    cost = "".join(c["printed"] for c in ran["lessons/06_claude_code_and_what_checkpoints_cost"
                                           ".ipynb"])
    assert "No plot here: it needs matplotlib" in cost
    everything = "".join(c["printed"] for job in jobs for c in ran[job["name"]])
    assert "The crash harness needs Linux or macOS" not in everything
    # The exercises' own crash runs on the student's functions are recorded and replayed too.
    explored = "".join(c["printed"] for c in ran[f"{LEVEL2} reference"])
    assert "killed_during_tool_2" in explored and "Tools that ran: list_tickets" in explored
    for name in NOTEBOOKS:
        visible = {c.shown_id for c in checks_for(name) if not c.hidden}
        starter = verdicts("\n".join(c["printed"] for c in ran[f"exercises/lesson2/{name}.ipynb"]))
        reference = verdicts("\n".join(c["printed"] for c in ran[f"{name} reference"]))
        # as `checkpoint-lab dev check` holds them: the starter fails every visible check, the
        # reference passes every one
        assert {k: v[0] for k, v in starter.items()} == dict.fromkeys(visible, "FAIL"), name
        assert {k: v[0] for k, v in reference.items()} == dict.fromkeys(visible, "PASS"), name

# -- the site in a browser ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def served(site):
    """``python -m http.server`` serving the site on a free loopback port; its base URL."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind",
                               "127.0.0.1", "--directory", str(site)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.terminate()
        server.wait(timeout=10)


@pytest.fixture(scope="module")
def chromium_browser(chromium, playwright_session):
    """Debian's Chromium, headless (never ``playwright install``), from the session's Playwright."""
    from tests.browser import CHROMIUM_FLAGS

    browser = playwright_session.chromium.launch(executable_path=str(chromium), headless=True,
                                                 args=CHROMIUM_FLAGS)
    try:
        yield browser
    finally:
        browser.close()


class Visit:
    """One student's browser (a fresh profile: empty cache, empty browser storage) on the site,
    every request it makes logged."""

    def __init__(self, browser) -> None:
        self.context = browser.new_context(viewport={"width": 1400, "height": 900},
                                           accept_downloads=True)
        self.requests: list[str] = []
        self.context.on("request", lambda request: self.requests.append(request.url))
        # The test reads the notebook through JupyterLab's own objects: expose them (a page
        # setting JupyterLab has; the site itself leaves it off).
        self.context.route("**/jupyter-lite.json*", self._expose_app)
        self.page = self.context.new_page()
        self.page.set_default_timeout(RUN_MS)

    @staticmethod
    def _expose_app(route) -> None:
        response = route.fetch()
        config = response.json()
        config.setdefault("jupyter-config-data", {})["exposeAppInBrowser"] = True
        route.fulfill(response=response, body=json.dumps(config))

    def outside(self) -> list[str]:
        """Requests to anything but loopback."""
        return [url for url in self.requests if not url.startswith(("data:", "blob:"))
                and urlparse(url).hostname not in ("127.0.0.1", "localhost")]

    def close(self) -> None:
        self.context.close()


@pytest.fixture
def visit(chromium_browser):
    opened = Visit(chromium_browser)
    try:
        yield opened
    finally:
        opened.close()


_KERNEL_IDLE = """() => {
    const widget = window.jupyterapp && window.jupyterapp.shell.currentWidget;
    const kernel = widget && widget.sessionContext && widget.sessionContext.session
        && widget.sessionContext.session.kernel;
    return !!kernel && kernel.status === 'idle' && kernel.connectionStatus === 'connected';
}"""

_OUTPUTS = """() => {
    const model = window.jupyterapp.shell.currentWidget.content.model;
    const cells = [];
    for (let i = 0; i < model.cells.length; i++) {
        const cell = model.cells.get(i);
        if (cell.type === 'code') {
            cells.push({source: cell.sharedModel.source, count: cell.executionCount,
                        outputs: cell.outputs.toJSON()});
        }
    }
    return cells;
}"""


def open_in_site(visit: Visit, base: str, relpath: str) -> float:
    """Open ``relpath`` in the site's JupyterLab; seconds until its kernel is ready."""
    started = time.monotonic()
    visit.page.goto(f"{base}/lab/index.html?path={relpath}")
    visit.page.wait_for_function(_KERNEL_IDLE, timeout=KERNEL_START_MS, polling=250)
    return time.monotonic() - started


def run_all_cells(visit: Visit) -> list[dict]:
    """Run ▸ Run All Cells; wait for every cell; the code cells with their outputs."""
    from tests.browser import run_all

    run_all(visit.page)
    visit.page.wait_for_function(_KERNEL_IDLE, timeout=RUN_MS, polling=250)
    return visit.page.evaluate(_OUTPUTS)


def _text(output: dict) -> str:
    if output.get("output_type") == "stream":
        text = output.get("text", "")
    else:
        text = output.get("data", {}).get("text/plain", "")
    return "".join(text) if isinstance(text, list) else text


def _failures(cells: list[dict]) -> list[str]:
    found = []
    for cell in cells:
        for output in cell["outputs"]:
            if output.get("output_type") == "error":
                found.append(f"{output['ename']}: {output['evalue']} in {cell['source'][:80]!r}")
            elif output.get("name") == "stderr":
                found.append(f"stderr {_text(output)[:300]!r} in {cell['source'][:80]!r}")
    return found


def _record_timing(name: str, seconds: float) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / "timings.json"
    timings = json.loads(path.read_text()) if path.exists() else {}
    timings[name] = round(seconds, 1)
    path.write_text(json.dumps(timings, indent=2) + "\n")


@pytest.mark.browser
@pytest.mark.timeout(900)  # a loaded 2-core machine: a kernel start alone has taken 70 s
def test_lesson_2_runs_top_to_bottom_in_the_browser_with_no_request_off_loopback(
        visit, served, record_property):
    seconds = open_in_site(visit, served, LESSON)
    record_property("first_kernel_start_s", round(seconds, 1))
    _record_timing("first kernel start (fresh profile), s", seconds)
    print(f"\nthe site's first kernel start: {seconds:.1f} s")
    assert visit.page.locator(".jp-Dialog").count() == 0  # no kernel to pick, nothing to dismiss

    cells = run_all_cells(visit)
    assert _failures(cells) == []
    assert all(c["count"] for c in cells if c["source"].strip()), "a cell did not run"
    printed = "".join(_text(o) for c in cells for o in c["outputs"])
    assert "No fork here: these crash states come from one recorded run" in printed

    # The timeline is drawn, and answers a click: the widgets talk to the browser's kernel.
    from tests.browser import visible
    from tests.test_browser import _toggle

    disk = visible(visit.page, ".cl-timeline .cl-disk-view .cl-disk").first  # the first timeline
    disk.scroll_into_view_if_needed()
    assert disk.get_attribute("data-disk") == "no-trace"  # B only, killed while tool 2 runs
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    visit.page.screenshot(path=str(ARTIFACTS / "lesson-2-timeline.png"))
    _toggle(visit.page, "cl-save-points", "A and B")
    visit.page.wait_for_function(
        """(sel) => { const d = document.querySelector(sel);
                      return d && (d.dataset.state || '').startsWith('A and B|'); }""",
        arg=".jp-NotebookPanel:not(.lm-mod-hidden) .cl-disk-view .cl-disk", timeout=60_000)
    assert disk.get_attribute("data-disk") == "checkpoint"
    assert visit.outside() == []


# -- Level 2's self-check in the browser, against checkpoint-lab check --------------------------

def _start(*args: str) -> subprocess.Popen:
    """``checkpoint-lab ARGS`` started now (it runs while the browser works); see `_finish`."""
    return subprocess.Popen([COMMAND, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def _finish(process: subprocess.Popen, statuses: tuple[int, ...] = (0,)) -> str:
    out, err = process.communicate(timeout=300)
    assert process.returncode in statuses, out + err
    return out


def _level2_variants(tmp_path: Path) -> dict[str, Path]:
    from tests.test_cli_check import released, with_reference

    starter = released(LEVEL2, tmp_path)
    return {"starter": starter, "reference": with_reference(LEVEL2, starter, tmp_path)}


def _put_in_browser_storage(visit: Visit, base: str, relpath: str, notebook: Path) -> None:
    """Save ``notebook`` at ``relpath`` in the browser's storage, as an upload would."""
    from graders.site.notebooks import browser_notebook

    visit.page.goto(f"{base}/lab/index.html")
    visit.page.wait_for_function("() => !!(window.jupyterapp && "
                                 "window.jupyterapp.serviceManager.contents)")
    content = json.loads(browser_notebook(notebook.read_bytes()))
    visit.page.evaluate("""async ([path, content]) => {
        await window.jupyterapp.serviceManager.contents.save(
            path, {type: 'notebook', format: 'json', content});
    }""", [relpath, content])


def _close_notebook(visit: Visit) -> None:
    visit.page.evaluate("""async () => {
        const widget = window.jupyterapp.shell.currentWidget;
        await widget.sessionContext.shutdown();
        widget.dispose();
    }""")


def _self_check_in_browser(visit: Visit, base: str, name: str) -> tuple[dict, str, float]:
    """Open Level 2, Run All: the verdicts its check cells show, all they printed, and the
    seconds its kernel took to start."""
    seconds = open_in_site(visit, base, EXERCISE)
    cells = run_all_cells(visit)
    assert _failures(cells) == []
    printed = "\n".join(_text(o) for c in cells for o in c["outputs"])
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / f"level-2-{name}.txt").write_text(printed)
    return verdicts(printed), printed, seconds


@pytest.mark.browser
@pytest.mark.timeout(900)
def test_level_2_self_check_in_the_browser_agrees_with_checkpoint_lab_check(
        visit, served, tmp_path):
    variants = _level2_variants(tmp_path)
    course = tmp_path / "course"
    started = {"starter": _start("check", str(variants["starter"])),
               "course": _start("course", str(course), "--students", "alice")}

    # The notebook as the site ships it: the starter code. The same checks fail, at the same
    # crash points, as `checkpoint-lab check` finds on the same notebook.
    seen, _printed, seconds = _self_check_in_browser(visit, served, "starter")
    _record_timing("Level 2 kernel start (browser cache warm), s", seconds)
    expected = verdicts(_finish(started["starter"], (1,)))
    assert expected and all(status == "FAIL" for status, _ in expected.values()), expected
    assert seen == expected
    _close_notebook(visit)

    # The reference answers in the answer cells: every visible check passes, as with check.
    started["reference"] = _start("check", str(variants["reference"]))
    _put_in_browser_storage(visit, served, EXERCISE, variants["reference"])
    seen, printed, _seconds = _self_check_in_browser(visit, served, "reference")
    expected = verdicts(_finish(started["reference"]))
    assert expected and all(status == "PASS" for status, _ in expected.values()), expected
    assert seen == expected
    said = " ".join(printed.split())
    note = "Self-check in this browser tab: your code ran here while the course recorded its"
    # Once a table (each check's cell and the self-check's: three), never once a row.
    assert note in said and said.count("Self-check in this browser tab") <= 3, said

    # hint(), as the notebook defines it, answers in the browser too.
    hinted = visit.page.evaluate("""async () => {
        const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
        const future = kernel.requestExecute({code: 'hint()'});
        const out = [];
        future.onIOPub = (msg) => {
            const c = msg.content;
            if (c.text) out.push(c.text);
            if (c.data && c.data['text/plain']) out.push(c.data['text/plain']);
            if (c.ename) out.push(c.ename + ': ' + c.evalue);
        };
        await future.done;
        return out.join('\\n');
    }""")
    assert "Error" not in hinted and len(hinted.strip()) > 40, hinted

    # Handing in: the file browser's Download (right-click) saves it under its own name; the
    # instructor's `checkpoint-lab grade` grades it as it grades any hand-in.
    handed_in = _download_from_file_browser(visit, tmp_path / "alice")
    assert handed_in.name == f"{LEVEL2}.ipynb"
    _finish(started["course"])
    scores = _grade(handed_in.parent.parent, course, tmp_path / "grades.csv")
    assert scores["l2_atomic_save"] == "3" and scores["l2_save_point_a"] == "3", scores
    assert visit.outside() == []


def _download_from_file_browser(visit: Visit, folder: Path) -> Path:
    page = visit.page
    page.evaluate("window.jupyterapp.commands.execute('docmanager:save')")
    item = page.locator(".jp-DirListing-item").filter(has_text=f"{LEVEL2}.ipynb")
    with page.expect_download() as download:
        item.click(button="right")
        page.get_by_role("menuitem", name="Download", exact=True).click()
    path = folder / download.value.suggested_filename
    download.value.save_as(path)
    return path


def _grade(submissions: Path, course: Path, scores: Path) -> dict[str, str]:
    """``checkpoint-lab grade`` on ``submissions``; the CSV row of its one student."""
    import csv

    _finish(_start("grade", "--course", str(course), "--csv", str(scores), "--no-feedback",
                   "--quiet", str(submissions)))
    with scores.open() as f:
        return next(csv.DictReader(f))
