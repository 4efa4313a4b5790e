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

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

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
TIMEOUT_MS = 60_000

LESSON = "lessons/02_crash_timeline.ipynb"  # replaced below by what lessons/README.md names
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


@pytest.fixture(scope="module")
def chromium() -> Path:
    """Debian's chromium, or a skip (a failure in CI) that says how to install it."""
    reason = _missing_browser()
    if reason:
        if IN_CI:
            pytest.fail(f"CI=true and {reason}", pytrace=False)
        pytest.skip(reason)
    return CHROMIUM


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
        return f"{self.url}/lab/tree/{relpath}?token={self.token}"


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
    wait_idle(page)


def wait_idle(page) -> None:
    """Wait until the notebook's kernel is idle and no cell is still queued or running."""
    page.locator('.jp-Notebook-ExecutionIndicator[data-status="idle"]').wait_for(
        timeout=TIMEOUT_MS)
    page.wait_for_function(
        """() => [...document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden)'
                  + ' .jp-CodeCell .jp-InputPrompt')]
               .every(p => !p.textContent.includes('*'))""",
        timeout=TIMEOUT_MS,
    )


def run_all(page) -> None:
    """Run ▸ Run All Cells, and wait until every cell has run."""
    page.get_by_role("menuitem", name="Run", exact=True).click()
    page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
    page.wait_for_function(
        """() => [...document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden)'
                  + ' .jp-CodeCell .jp-InputPrompt')]
               .every(p => /\\[\\d+\\]/.test(p.textContent))""",
        timeout=TIMEOUT_MS,
    )
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
    editor = cell.locator(".cm-content")
    editor.click()
    page.keyboard.press("Control+A")
    page.keyboard.press("Delete")
    page.keyboard.insert_text(source)
    page.keyboard.press("Escape")
