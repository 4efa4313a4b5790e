"""The course in a real browser: Debian's Chromium, headless, driving JupyterLab.

JupyterLab is started the way a student starts it (``checkpoint-lab lab --no-browser``), in a
temporary workspace, on a free loopback port with a token, and stopped by its process id
afterwards. Playwright drives ``/usr/bin/chromium`` (never ``playwright install``). Each step
leaves a screenshot in ``test-artifacts/browser/``; the one of the lesson open in JupyterLab is
also copied to ``docs/`` for the README.

Without chromium the tests are skipped with a message saying how to install it; in CI
(``CI=true``) a missing browser is a failure.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest

from tests.conftest import IN_CI, ROOT

pytestmark = pytest.mark.browser

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
ARTIFACTS = ROOT / "test-artifacts" / "browser"
DOCS_SCREENSHOT = ROOT / "docs" / "lesson-in-jupyterlab.png"
TIMEOUT_MS = 90_000

LESSON = "lessons/02_two_save_points.ipynb"  # the crash timeline (lessons/README.md)
EXERCISE = "exercises/lesson2/02_two_latent_failures.ipynb"


# -- what the browser needs ---------------------------------------------------------------------


def _missing_browser() -> str | None:
    if not CHROMIUM.exists():
        return (f"Debian's chromium is not installed ({CHROMIUM} is missing): install it with "
                "`sudo apt-get install chromium` to run the browser tests")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return ("the Python package playwright is not installed: run "
                "`.venv/bin/pip install -e '.[test]'` (never `playwright install`)")
    return None


def require_browser(in_ci: bool = IN_CI) -> Path:
    """Debian's chromium, or a skip (a failure in CI) that says how to install it."""
    reason = _missing_browser()
    if reason:
        if in_ci:
            pytest.fail(f"CI=true and {reason}", pytrace=False)
        pytest.skip(reason)
    return CHROMIUM


@pytest.fixture(scope="module")
def chromium() -> Path:
    """Debian's chromium (see `require_browser`)."""
    return require_browser()


# -- JupyterLab, started as a student starts it ---------------------------------------------------


@dataclass
class Lab:
    """A running ``checkpoint-lab lab``: where it listens and what it serves."""

    url: str
    token: str
    workspace: Path
    process: subprocess.Popen
    log: Path
    runtime_dir: Path

    def api(self, method: str, path: str) -> object:
        request = urllib.request.Request(
            f"{self.url}{path}", method=method, headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(request, timeout=10) as response:
            body = response.read()
        return json.loads(body) if body else None

    def page_url(self, relpath: str) -> str:
        # ?reset: a fresh layout, without the notebooks an earlier test left open
        return f"{self.url}/lab/tree/{relpath}?reset&token={self.token}"


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _processes_mentioning(text: str) -> list[int]:
    """Pids of live processes whose command line contains ``text`` (Linux /proc)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if text in cmdline:
                pids.append(int(entry.name))
    return pids


def start_lab(workspace: Path, scratch: Path, course: Path = ROOT,
              env: dict[str, str] | None = None) -> Lab:
    """Start ``checkpoint-lab lab --no-browser`` on ``workspace``; wait until it answers."""
    port, token = _free_port(), os.urandom(12).hex()
    runtime_dir = scratch / "runtime"
    log = scratch / "lab.log"
    env = dict(os.environ, **(env or {}), JUPYTER_TOKEN=token,
               JUPYTER_RUNTIME_DIR=str(runtime_dir), CHECKPOINT_LAB_COURSE=str(course))
    cli = Path(sys.executable).with_name("checkpoint-lab")
    with log.open("wb") as out:
        process = subprocess.Popen(
            [str(cli), "lab", "--no-browser", "--port", str(port), "--workspace", str(workspace)],
            stdout=out, stderr=subprocess.STDOUT, env=env, cwd=scratch, start_new_session=True,
        )
    lab = Lab(f"http://127.0.0.1:{port}", token, workspace, process, log, runtime_dir)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"checkpoint-lab lab exited with {process.returncode}:\n"
                                 f"{log.read_text(errors='replace')[-3000:]}")
        try:
            lab.api("GET", "/api/status")
            return lab
        except OSError:
            time.sleep(0.2)
    stop_lab(lab)
    raise AssertionError(f"JupyterLab did not answer within 60 s:\n{log.read_text()[-3000:]}")


def stop_lab(lab: Lab) -> None:
    """Shut the kernels down, end JupyterLab's process group, and check nothing is left."""
    try:
        for kernel in lab.api("GET", "/api/kernels"):
            lab.api("DELETE", f"/api/kernels/{kernel['id']}")
    except OSError:
        pass
    try:
        os.killpg(lab.process.pid, signal.SIGTERM)
        lab.process.wait(timeout=15)
    except ProcessLookupError:
        pass
    except subprocess.TimeoutExpired:
        os.killpg(lab.process.pid, signal.SIGKILL)
        lab.process.wait(timeout=10)
    leftovers = _processes_mentioning(str(lab.runtime_dir))
    for pid in leftovers:
        os.kill(pid, signal.SIGKILL)
    assert not leftovers, f"processes left behind by JupyterLab (killed now): {leftovers}"


# -- the browser ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser(chromium, tmp_path_factory):
    """A headless Chromium context with a fresh profile; a flaky start gets one retry."""
    from playwright.sync_api import Error as PlaywrightError
    from playwright.sync_api import sync_playwright

    last_error = None
    for attempt in range(2):
        manager = sync_playwright().start()
        try:
            context = manager.chromium.launch_persistent_context(
                str(tmp_path_factory.mktemp(f"chromium-profile-{attempt}")),
                executable_path=str(chromium), headless=True, args=CHROMIUM_FLAGS,
                viewport={"width": 1400, "height": 900}, timeout=30_000,
            )
            page = context.new_page()
            page.goto("about:blank", timeout=15_000)
            page.close()
        except PlaywrightError as err:
            last_error = err
            manager.stop()
            continue
        try:
            yield context
        finally:
            context.close()
            manager.stop()
        return
    pytest.fail(f"Chromium did not start twice in a row: {last_error}", pytrace=False)


def shot(page, name: str) -> Path:
    """Save a screenshot of this step in test-artifacts/browser/."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path))
    return path


# -- JupyterLab, operated as a student operates it ----------------------------------------------


def open_notebook(page, lab: Lab, relpath: str) -> None:
    """Open a notebook and wait until its kernel is idle."""
    page.goto(lab.page_url(relpath), timeout=TIMEOUT_MS)
    page.locator(".jp-NotebookPanel .jp-Notebook").first.wait_for(timeout=TIMEOUT_MS)
    deadline = time.monotonic() + TIMEOUT_MS / 1000
    while time.monotonic() < deadline:  # the kernel is up on the server's side too
        sessions = lab.api("GET", "/api/sessions")
        if any(s["path"] == relpath and s["kernel"]["execution_state"] == "idle"
               for s in sessions):
            break
        time.sleep(0.2)
    else:
        raise AssertionError(f"no idle kernel for {relpath}: {sessions}")
    wait_idle(page)


_PROMPTS = ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell .jp-InputPrompt"


def wait_idle(page) -> None:
    """Wait until the notebook's kernel is idle and no cell is still queued or running."""
    page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) "
                 '.jp-Notebook-ExecutionIndicator[data-status="idle"]').wait_for(
        timeout=TIMEOUT_MS)
    page.wait_for_function(
        f"""() => [...document.querySelectorAll({_PROMPTS!r})]
               .every(p => !p.textContent.includes('*'))""",
        timeout=TIMEOUT_MS,
    )


def run_all(page) -> None:
    """Run ▸ Run All Cells, and wait until the kernel has finished every cell it ran.

    A Run All sent while a fresh kernel is still connecting can be dropped by JupyterLab, and
    then no cell starts: that one case gets a second Run All.
    """
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    started = f"""() => [...document.querySelectorAll({_PROMPTS!r})]
                     .some(p => /\\[(\\*|\\d+)\\]/.test(p.textContent))"""
    for attempt in range(2):
        page.get_by_role("menuitem", name="Run", exact=True).click()
        page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
        try:
            page.wait_for_function(started, timeout=15_000 if attempt == 0 else TIMEOUT_MS)
            break
        except PlaywrightTimeout:
            if attempt:
                raise
    wait_idle(page)


def prompts(page) -> list[str]:
    """The input prompts of the open notebook's code cells: ``[3]:``, ``[*]:`` or ``[ ]:``."""
    return [p.strip() for p in page.locator(_PROMPTS).all_inner_texts()]


def run_cell(page, index: int) -> None:
    """Run the one cell at ``index`` (Ctrl+Enter), and wait until it has run."""
    cell = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell").nth(index)
    cell.locator(".jp-InputPrompt").click()
    page.keyboard.press("Control+Enter")
    cell.locator(".jp-InputPrompt").filter(has_text=re.compile(r"\[\d+\]")).wait_for(
        timeout=TIMEOUT_MS)
    wait_idle(page)


def error_outputs(page) -> list[str]:
    """The text of every error (traceback) shown in the open notebook."""
    return page.locator(
        ".jp-NotebookPanel:not(.lm-mod-hidden) "
        '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]'
    ).all_inner_texts()


def set_cell_source(page, index: int, source: str) -> None:
    """Replace the code of the cell at ``index`` with ``source``, as a student pastes it."""
    cell = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell").nth(index)
    markdown = "jp-MarkdownCell" in (cell.get_attribute("class") or "")
    if markdown:
        cell.locator(".jp-MarkdownOutput").dblclick()  # a rendered markdown cell: edit it
    editor = cell.locator(".cm-content")
    editor.click()
    page.keyboard.press("Control+A")
    page.keyboard.press("Delete")
    page.keyboard.insert_text(source)
    if markdown:
        page.keyboard.press("Shift+Enter")  # render it again
    else:
        page.keyboard.press("Escape")


def visible(page, selector: str):
    """``selector`` inside the notebook on screen."""
    return page.locator(f".jp-NotebookPanel:not(.lm-mod-hidden) {selector}")


# -- the tests --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def lab(chromium, tmp_path_factory):
    """``checkpoint-lab lab --no-browser`` on a fresh workspace of the real course."""
    scratch = tmp_path_factory.mktemp("lab")
    running = start_lab(scratch / "workspace", scratch)
    try:
        yield running
    finally:
        stop_lab(running)


@pytest.fixture
def page(browser, lab):
    tab = browser.new_page()
    tab.set_default_timeout(TIMEOUT_MS)
    try:
        yield tab
    finally:
        tab.close()


def _disk(page) -> tuple[str, str]:
    view = visible(page, ".cl-timeline .cl-disk-view .cl-disk")
    return view.get_attribute("data-disk"), view.inner_text()


def _set_moment(page, moment: int) -> None:
    readout = visible(page, ".cl-crash-point .widget-readout")
    handle = visible(page, ".cl-crash-point .noUi-handle")
    current = int(readout.inner_text().split(".")[0])
    handle.focus()
    for _ in range(abs(moment - current)):
        page.keyboard.press("ArrowRight" if moment > current else "ArrowLeft")
    page.wait_for_function(
        """([sel, n]) => document.querySelector(sel).textContent.trim().startsWith(n + '.')""",
        arg=[".jp-NotebookPanel:not(.lm-mod-hidden) .cl-crash-point .widget-readout", moment])


def _toggle(page, widget: str, label: str) -> None:
    button = visible(page, f".{widget} button").filter(has_text=label)
    button.click()
    page.wait_for_function("(b) => b.classList.contains('mod-active')",
                           arg=button.element_handle())


# What a crash at each moment leaves on disk, for each of the four loops (lessons/README.md;
# the lesson's own claims: a torn save point B in place, no trace of a call in flight without A).
TIMELINE_STEPS = [
    # (what the student does, moment, save points, write mode, what the disk view must show)
    ("as the lesson opens", 7, "B only", "in place", "no-trace"),
    ("switch to A and B", 7, "A and B", "in place", "checkpoint"),
    ("move to save point B of turn 2", 8, "A and B", "in place", "torn-json"),
    ("switch to temp + rename", 8, "A and B", "temp + rename", "checkpoint"),
    ("switch to B only", 8, "B only", "temp + rename", "checkpoint"),
    ("move to save point B of turn 1", 4, "B only", "temp + rename", "no-trace"),
    ("switch to in place", 4, "B only", "in place", "torn-json"),
    ("move to the end: no crash", 10, "B only", "in place", "checkpoint"),
    ("move to model call 1", 1, "B only", "in place", "no-trace"),
]
HEADLINES = {"no-trace": "no trace", "torn-json": "torn JSON",
             "checkpoint": "checkpoint.json, readable"}


def _agrees_with_the_harness(timeline_text: str, saves: str, mode: str, disk: str,
                             shown_for: str = "") -> None:
    """Run the crash point the view names, here, on the same loop: the bytes must agree."""
    from graders import run_point
    from graders.teaching.variants import variant

    point = re.search(r"harness crash point (\w+)", timeline_text).group(1)
    if shown_for:  # the point the disk view itself was drawn for (the text may lag a redraw)
        point = shown_for.rsplit("|", 1)[-1]
    seen = run_point(variant(saves, mode), "support-tickets", point)
    if seen.checkpoint is None:
        assert disk == "no-trace", (point, saves, mode, disk)
    elif seen.parse_error is not None:
        assert disk == "torn-json", (point, saves, mode, disk, seen.checkpoint[-80:])
    else:
        state = json.loads(seen.checkpoint)
        assert disk in ("checkpoint", "no-trace"), (point, saves, mode, disk)
        if state["pendingToolUse"] is not None:
            assert disk == "checkpoint", (point, saves, mode, state["pendingToolUse"])


def test_lesson_2_runs_and_its_crash_timeline_shows_what_is_on_disk(page, lab):
    open_notebook(page, lab, LESSON)
    shot(page, "01-lesson-open")
    # Nothing to click away first: no news question, no build or kernel dialog.
    assert page.locator(".jp-Dialog").count() == 0
    assert page.locator(".Toastify__toast").count() == 0
    assert page.get_by_text("Jupyter news").count() == 0
    run_all(page)
    assert error_outputs(page) == []
    assert not [p for p in prompts(page) if p == "[ ]:" or "*" in p], prompts(page)

    timeline = visible(page, ".cl-timeline")
    timeline.scroll_into_view_if_needed()
    path = shot(page, "02-lesson-run-all")
    if not DOCS_SCREENSHOT.exists() or os.environ.get("CHECKPOINT_LAB_DOCS_SCREENSHOT") == "1":
        DOCS_SCREENSHOT.parent.mkdir(exist_ok=True)
        shutil.copyfile(path, DOCS_SCREENSHOT)

    saves, mode = "B only", "in place"
    for i, (action, moment, want_saves, want_mode, want_disk) in enumerate(TIMELINE_STEPS):
        if want_saves != saves:
            _toggle(page, "cl-save-points", want_saves)
        if want_mode != mode:
            _toggle(page, "cl-write-mode", want_mode)
        _set_moment(page, moment)
        saves, mode = want_saves, want_mode
        # the kernel redraws the view after a click: wait for the view of THIS loop and moment
        page.wait_for_function(
            """([sel, want, saves, mode]) => {
                const d = document.querySelector(sel);
                return d && d.dataset.disk === want
                    && (d.dataset.state || "").startsWith(saves + "|" + mode + "|");
            }""",
            arg=[".jp-NotebookPanel:not(.lm-mod-hidden) .cl-disk-view .cl-disk", want_disk,
                 saves, mode],
            timeout=15_000)
        disk, text = _disk(page)
        shot(page, f"03-timeline-{i + 1}-{moment}-{saves}-{mode}".replace(" ", "_"))
        assert text.startswith(f"On disk: {HEADLINES[disk]}"), (action, text)
        shown_for = visible(page, ".cl-timeline .cl-disk-view .cl-disk").get_attribute(
            "data-state") or ""
        _agrees_with_the_harness(timeline.inner_text(), saves, mode, disk, shown_for)
        if (moment, saves) == (7, "A and B"):
            # Save point A wrote the call in flight: the checkpoint names it, highlighted.
            pending = visible(page, ".cl-disk-view tr.cl-field-highlight").filter(
                has_text="pendingToolUse")
            assert "build_table" in pending.inner_text()

    quiz = visible(page, ".cl-quiz-b-only-tool-window")
    quiz.scroll_into_view_if_needed()
    feedback = quiz.locator(".cl-quiz-feedback")
    assert "Choose an answer." in feedback.inner_text()
    # Each student sees the options in an order of their own (seeded by the user name, which the
    # kernel shares with this process): ask the quiz data which letter is right here.
    from graders.teaching.quizzes import QUIZZES

    right = QUIZZES["b_only_tool_window"].right_letter
    wrong = next(letter for letter in QUIZZES["b_only_tool_window"].letters if letter != right)
    quiz.locator(".cl-quiz-choices label").filter(has_text=f"({wrong})").click()
    quiz.locator('.cl-quiz-verdict[data-correct="false"]').wait_for()
    assert "Not quite." in feedback.inner_text() and "Try another answer." in feedback.inner_text()
    quiz.locator(".cl-quiz-choices label").filter(has_text=f"({right})").click()
    quiz.locator('.cl-quiz-verdict[data-correct="true"]').wait_for()
    assert feedback.inner_text().startswith(f"({right}) Right.")
    shot(page, "04-quiz-answered")
    assert error_outputs(page) == []


def _reference_cells() -> dict[str, str]:
    """The reference fix split the way the answer cells split it: the save, then the loop."""
    source = (ROOT / "solutions" / "02_two_latent_failures.py").read_text()
    lines = source.splitlines()
    module = ast.parse(source)
    loop = next(n for n in module.body
                if isinstance(n, ast.FunctionDef) and n.name == "run_agent")
    start = loop.lineno - 1 - len(loop.decorator_list)
    rest = [n for n in module.body if n is not loop
            and not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant))
            and not (isinstance(n, ast.ImportFrom) and n.module == "__future__")]
    save = "\n\n\n".join("\n".join(lines[n.lineno - 1:n.end_lineno]) for n in rest)
    return {"l2_save_checkpoint": save,
            "l2_run_agent": "\n".join(lines[start:loop.end_lineno])}


def _self_check_rows(page) -> list[tuple[str, str, str]]:
    table = visible(page, ".checkpoint-lab-selfcheck").last
    table.scroll_into_view_if_needed()
    return [tuple(row.locator("td").all_inner_texts())
            for row in table.locator("tbody tr").all()]


def _validate(page) -> tuple[str, str]:
    visible(page, ".jp-Toolbar").get_by_text("Validate", exact=True).click()
    dialog = page.locator(".jp-Dialog")
    dialog.wait_for(timeout=TIMEOUT_MS * 2)
    body = dialog.locator(".jp-Dialog-body")
    return body.get_attribute("class"), body.inner_text()


def _close_dialog(page) -> None:
    page.locator(".jp-Dialog .jp-Dialog-button.jp-mod-accept").click()
    page.locator(".jp-Dialog").wait_for(state="detached")


def test_level_2_exercise_fails_as_released_passes_with_the_fix_and_validates(page, lab):
    notebook = nbformat.read(str(lab.workspace / EXERCISE), as_version=4)
    answer_cell = {c.metadata.get("nbgrader", {}).get("grade_id"): i
                   for i, c in enumerate(notebook.cells)}

    open_notebook(page, lab, EXERCISE)
    run_all(page)
    if prompts(page)[-1] == "[ ]:":  # Run All stopped at a failing check cell: run the table too
        run_cell(page, answer_cell["l2_self_check"])
    rows = _self_check_rows(page)
    shot(page, "05-exercise-released-self-check")
    status = {name: (state, message) for name, state, message in rows}
    for check in ("l2_atomic_save", "l2_save_point_a"):
        state, message = status[check]
        assert state.startswith("FAIL"), rows
        assert len(message) > 40, rows  # a message that says what happened, not a bare FAIL
    # Under each failed check, the crash points it failed at, each with the judge's verdict.
    assert any(name.startswith(("torn_write_", "killed_")) and state.startswith("FAIL")
               for name, state, _ in rows), rows

    for grade_id, code in _reference_cells().items():
        set_cell_source(page, answer_cell[grade_id], code)
    written = (ROOT / "solutions" / "02_two_latent_failures.written_answers.md").read_text()
    set_cell_source(page, answer_cell["l2_name_the_failures"], written.split("\n## ", 1)[1])
    run_all(page)
    assert error_outputs(page) == []
    rows = _self_check_rows(page)
    shot(page, "06-exercise-fixed-self-check")
    assert not [r for r in rows if r[1].startswith("FAIL")], rows
    checks = {name for name in status if name.startswith("l2_")}
    assert checks <= {name for name, _, _ in rows}  # the same checks ran, the hidden ones listed
    for check in ("l2_atomic_save", "l2_save_point_a"):
        assert dict((n, s) for n, s, _ in rows)[check].startswith("PASS"), rows

    page.keyboard.press("Control+s")
    page.locator(".jp-mod-current.jp-mod-dirty").wait_for(state="detached")
    kind, text = _validate(page)
    shot(page, "07-validate-fixed")
    assert "validation-failed" not in kind, text
    assert "Success" in text and "passes all the tests" in text, text
    _close_dialog(page)


def test_the_assignment_list_has_lesson_2_ready_to_submit(page, lab):
    page.goto(f"{lab.url}/lab?reset&token={lab.token}")
    page.get_by_role("menuitem", name="Nbgrader", exact=True).click()
    page.get_by_role("menuitem", name="Assignment List").click()
    downloaded = page.locator("#fetched_assignments_list")
    downloaded.get_by_text("lesson2").wait_for()
    shot(page, "08-assignment-list")
    assert downloaded.get_by_role("button", name="Submit").count() == 1


def test_validate_on_the_released_starter_reports_the_failing_checks(page, lab):
    # Start over from the release, as a student would (an earlier test saved the fix here).
    reset = subprocess.run(
        [str(Path(sys.executable).with_name("checkpoint-lab")), "reset",
         "02_two_latent_failures", "--workspace", str(lab.workspace)],
        capture_output=True, text=True, check=True)
    assert "back to its released state" in reset.stdout
    notebook = nbformat.read(str(lab.workspace / EXERCISE), as_version=4)
    released = nbformat.read(str(ROOT / "exercises" / Path(EXERCISE).name), as_version=4)
    for nb in (notebook, released):  # the workspace's copy carries the kernel's language_info
        nb.metadata.pop("language_info", None)
    assert notebook == released
    cells = [c.metadata.get("nbgrader", {}).get("grade_id") for c in notebook.cells]
    open_notebook(page, lab, EXERCISE)
    set_cell_source(page, cells.index("l2_name_the_failures"), "The save and the save points.")
    page.keyboard.press("Control+s")
    page.locator(".jp-mod-current.jp-mod-dirty").wait_for(state="detached")
    kind, text = _validate(page)
    shot(page, "09-validate-released-starter")
    _close_dialog(page)
    assert "validation-failed" in kind, text
    assert 'run_check("l2_atomic_save"' in text and 'run_check("l2_save_point_a"' in text, text
