"""What the browser tests share: Debian's Chromium, JupyterLab started two ways, and the moves a
student makes in it (open a notebook, Run All, click, type, Validate).

The fixtures that use these (one JupyterLab and one Chromium for the whole test session, a fresh
copy of the notebooks for each test) are in ``tests/conftest.py``; test modules import helpers
from here, never fixtures from one another.

JupyterLab is started either as a student starts it (``checkpoint-lab lab --no-browser``, in a
workspace) or as Binder and JupyterHub start it (a plain ``jupyter lab`` in a folder holding the
notebooks, nothing course-specific on its command line): each on a free loopback port with a
token, stopped by its process id afterwards. Playwright drives ``/usr/bin/chromium`` (never
``playwright install``). Without chromium the tests are skipped with a message saying how to
install it; in CI (``CI=true``) a missing browser is a failure.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import IN_CI, ROOT

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
TIMEOUT_MS = 90_000
BIN = Path(sys.executable).parent


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


@contextmanager
def chromium_context(chromium: Path, profile: Path, manager=None):
    """A headless Chromium context with a fresh profile; a flaky start gets one retry.

    ``manager`` is the session's Playwright (one per thread: a second sync Playwright in the
    same thread refuses to start); without one, a Playwright of its own is started and stopped.
    """
    from playwright.sync_api import Error as PlaywrightError
    from playwright.sync_api import sync_playwright

    last_error = None
    for attempt in range(2):
        own = manager is None
        playwright = sync_playwright().start() if own else manager
        try:
            context = playwright.chromium.launch_persistent_context(
                str(profile / f"attempt-{attempt}"), executable_path=str(chromium),
                headless=True, args=CHROMIUM_FLAGS, viewport={"width": 1400, "height": 900},
                timeout=30_000,
            )
            page = context.new_page()
            page.goto("about:blank", timeout=15_000)
            page.close()
        except PlaywrightError as err:
            last_error = err
            if own:
                playwright.stop()
            continue
        try:
            yield context
        finally:
            context.close()
            if own:
                playwright.stop()
        return
    pytest.fail(f"Chromium did not start twice in a row: {last_error}", pytrace=False)


def shot(page, name: str) -> Path:
    """Save a screenshot of this step in test-artifacts/browser/."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path))
    return path


# -- JupyterLab ---------------------------------------------------------------------------------


@dataclass
class Lab:
    """A running JupyterLab: where it listens and what it serves."""

    url: str
    token: str
    workspace: Path
    process: subprocess.Popen
    log: Path
    runtime_dir: Path

    def api(self, method: str, path: str, body: dict | None = None) -> object:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(
            f"{self.url}{path}", method=method, data=data,
            headers={"Authorization": f"token {self.token}",
                     "Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=10) as response:
            payload = response.read()
        return json.loads(payload) if payload else None

    def page_url(self, relpath: str) -> str:
        # ?reset: a fresh layout, without the notebooks an earlier test left open
        return f"{self.url}/lab/tree/{relpath}?reset&token={self.token}"

    def close_sessions(self) -> None:
        """Shut down every notebook's session and kernel, as closing JupyterLab would."""
        for session in self.api("GET", "/api/sessions"):
            self.api("DELETE", f"/api/sessions/{session['id']}")
        for kernel in self.api("GET", "/api/kernels"):
            self.api("DELETE", f"/api/kernels/{kernel['id']}")


def free_port() -> int:
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


def _wait_until_up(lab: Lab, what: str) -> Lab:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if lab.process.poll() is not None:
            raise AssertionError(f"{what} exited with {lab.process.returncode}:\n"
                                 f"{lab.log.read_text(errors='replace')[-3000:]}")
        try:
            lab.api("GET", "/api/status")
            return lab
        except OSError:
            time.sleep(0.2)
    stop_lab(lab)
    raise AssertionError(f"{what} did not answer within 60 s:\n{lab.log.read_text()[-3000:]}")


def start_lab(workspace: Path, scratch: Path, course: Path = ROOT,
              env: dict[str, str] | None = None) -> Lab:
    """Start ``checkpoint-lab lab --no-browser`` on ``workspace``; wait until it answers."""
    port, token = free_port(), os.urandom(12).hex()
    runtime_dir = scratch / "runtime"
    log = scratch / "lab.log"
    env = dict(os.environ, **(env or {}), JUPYTER_TOKEN=token,
               JUPYTER_RUNTIME_DIR=str(runtime_dir), CHECKPOINT_LAB_COURSE=str(course))
    with log.open("wb") as out:
        process = subprocess.Popen(
            [str(BIN / "checkpoint-lab"), "lab", "--no-browser", "--port", str(port),
             "--workspace", str(workspace)],
            stdout=out, stderr=subprocess.STDOUT, env=env, cwd=scratch, start_new_session=True,
        )
    return _wait_until_up(Lab(f"http://127.0.0.1:{port}", token, workspace, process, log,
                              runtime_dir), "checkpoint-lab lab")


def plain_jupyter_env(home: Path) -> dict[str, str]:
    """An environment with nothing of the user's own Jupyter setup: a new user's first start."""
    return {"HOME": str(home), "JUPYTER_CONFIG_DIR": str(home / ".jupyter"),
            "JUPYTER_DATA_DIR": str(home / ".local" / "share" / "jupyter"),
            "JUPYTERLAB_SETTINGS_DIR": str(home / ".jupyter" / "lab" / "user-settings"),
            "JUPYTERLAB_WORKSPACES_DIR": str(home / ".jupyter" / "lab" / "workspaces")}


def install_like_binder(prefix: Path) -> Path:
    """A new environment in ``prefix`` with the course installed as ``environment.yml`` installs
    it on Binder and JupyterHub (``pip install -c constraints.txt .``, not editable); its bin/."""
    import venv

    venv.EnvBuilder(with_pip=True, clear=True).create(prefix)
    python = prefix / "bin" / "python"
    done = subprocess.run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                           "-c", str(ROOT / "constraints.txt"), str(ROOT)],
                          capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        raise AssertionError(f"pip could not install the course:\n{done.stderr[-3000:]}")
    return prefix / "bin"


def start_plain_lab(root: Path, scratch: Path, bin_dir: Path = BIN) -> Lab:
    """Start ``jupyter lab`` in ``root`` as Binder or a JupyterHub does: the environment's own
    ``jupyter`` (in ``bin_dir``), no course option on its command line, a user with no Jupyter
    settings."""
    port, token = free_port(), os.urandom(12).hex()
    runtime_dir, log, home = scratch / "runtime", scratch / "plain-lab.log", scratch / "home"
    home.mkdir(parents=True, exist_ok=True)
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("JUPYTER", "CHECKPOINT_LAB"))}
    env.update(plain_jupyter_env(home), JUPYTER_TOKEN=token, JUPYTER_RUNTIME_DIR=str(runtime_dir))
    cmd = [str(bin_dir / "jupyter"), "lab", "--no-browser", f"--ServerApp.port={port}",
           "--ServerApp.port_retries=0"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")  # what a root shell needs; Binder and hubs run as a user
    with log.open("wb") as out:
        process = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=root,
                                   start_new_session=True)
    return _wait_until_up(Lab(f"http://127.0.0.1:{port}", token, root, process, log,
                              runtime_dir), "jupyter lab")


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
    left = _processes_mentioning(str(lab.runtime_dir))
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert not left, f"processes left behind by JupyterLab (killed now): {left}"


def fresh_notebooks(lab: Lab) -> None:
    """Give the next test the notebooks as released: close every session, put each released
    notebook back, and remove what an earlier test made (backups, solutions, other files)."""
    from graders.workspace.notebooks import delivered_bytes, released_notebooks

    lab.close_sessions()
    shipped = released_notebooks(ROOT)
    keep = {item.relpath for item in shipped}
    for folder in ("lessons", "exercises"):
        for path in sorted((lab.workspace / folder).rglob("*"), reverse=True):
            relpath = path.relative_to(lab.workspace).as_posix()
            if path.is_file() and relpath not in keep:
                path.unlink()
            elif path.is_dir() and not any(k.startswith(relpath + "/") for k in keep):
                shutil.rmtree(path)
    for item in shipped:
        (lab.workspace / item.relpath).write_bytes(delivered_bytes(item.source))
    for made in ("backups", "solutions"):
        shutil.rmtree(lab.workspace / made, ignore_errors=True)


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


PROMPTS = ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell .jp-InputPrompt"


def wait_idle(page) -> None:
    """Wait until the notebook's kernel is idle and no cell is still queued or running."""
    page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) "
                 '.jp-Notebook-ExecutionIndicator[data-status="idle"]').wait_for(
        timeout=TIMEOUT_MS)
    page.wait_for_function(
        f"""() => [...document.querySelectorAll({PROMPTS!r})]
               .every(p => !p.textContent.includes('*'))""",
        timeout=TIMEOUT_MS,
    )


def modified_on_open(page, lab: Lab, relpath: str, shot_name: str) -> bool:
    """Open ``relpath`` and let its kernel start: whether JupyterLab then marks the notebook
    modified (it offers to save what the student never changed); a screenshot when it does."""
    open_notebook(page, lab, relpath)
    wait_idle(page)
    time.sleep(1)  # the kernel's info reaches the notebook's metadata after it is idle
    if page.locator(".jp-mod-current.jp-mod-dirty").count():
        shot(page, shot_name)
        return True
    return False


def run_all(page) -> None:
    """Run ▸ Run All Cells, and wait until the kernel has finished every cell it ran.

    A Run All sent while a fresh kernel is still connecting can be dropped by JupyterLab, and
    then no cell starts: that one case gets a second Run All.
    """
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    started = f"""() => [...document.querySelectorAll({PROMPTS!r})]
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
    return [p.strip() for p in page.locator(PROMPTS).all_inner_texts()]


def cells(page):
    """The cells of the notebook on screen."""
    return page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell")


def run_cell(page, index: int) -> None:
    """Run the one cell at ``index`` (Ctrl+Enter), and wait until it has run."""
    cell = cells(page).nth(index)
    before = cell.locator(".jp-InputPrompt").inner_text().strip()
    cell.locator(".jp-InputPrompt").click()
    page.keyboard.press("Control+Enter")
    page.wait_for_function(
        "([el, before]) => /\\[\\d+\\]/.test(el.textContent) && el.textContent.trim() !== before",
        arg=[cell.locator(".jp-InputPrompt").element_handle(), before], timeout=TIMEOUT_MS)
    wait_idle(page)


def append_code_cell(page, source: str) -> int:
    """Add a code cell at the end of the notebook on screen, type ``source`` and run it, as a
    student does (select the last cell, B, Enter, type, Ctrl+Enter); the new cell's index."""
    last = cells(page).last
    last.scroll_into_view_if_needed()
    last.locator(".jp-InputPrompt").first.click()
    page.keyboard.press("Escape")
    count = cells(page).count()
    page.keyboard.press("b")
    page.wait_for_function("([sel, n]) => document.querySelectorAll(sel).length > n",
                           arg=[".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell",
                                count])
    page.keyboard.press("Enter")
    page.keyboard.insert_text(source)
    page.keyboard.press("Escape")
    run_cell(page, count)
    return count


def error_outputs(page) -> list[str]:
    """The text of every error (traceback) shown in the open notebook."""
    return page.locator(
        ".jp-NotebookPanel:not(.lm-mod-hidden) "
        '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]'
    ).all_inner_texts()


def set_cell_source(page, index: int, source: str) -> None:
    """Replace the code of the cell at ``index`` with ``source``, as a student pastes it."""
    cell = cells(page).nth(index)
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


def in_timeline(page, selector: str):
    """``selector`` inside the first crash timeline on screen (lesson 02 shows a second one, at
    moment 4, further down)."""
    return visible(page, ".cl-timeline").first.locator(selector)


def save(page) -> None:
    """File ▸ Save (Ctrl+S), and wait until the notebook is no longer marked modified."""
    page.keyboard.press("Control+s")
    page.locator(".jp-mod-current.jp-mod-dirty").wait_for(state="detached")


def validate(page) -> tuple[str, str]:
    """Press the notebook's Validate button; the dialog body's class and text."""
    visible(page, ".jp-Toolbar").get_by_text("Validate", exact=True).click()
    dialog = page.locator(".jp-Dialog")
    dialog.wait_for(timeout=TIMEOUT_MS * 2)
    body = dialog.locator(".jp-Dialog-body")
    return body.get_attribute("class"), body.inner_text()


def close_dialog(page) -> None:
    page.locator(".jp-Dialog .jp-Dialog-button.jp-mod-accept").click()
    page.locator(".jp-Dialog").wait_for(state="detached")


#: What nbgrader says for a check cell when it cannot say why (issue 9, item 2).
NBGRADER_PARTIAL = "Partial credit; passed some but not all of the tests"


# -- measuring the page ---------------------------------------------------------------------------


def intersect(a: dict, b: dict) -> bool:
    return (a["x"] < b["x"] + b["width"] and b["x"] < a["x"] + a["width"]
            and a["y"] < b["y"] + b["height"] and b["y"] < a["y"] + a["height"])


def inside(inner: dict, outer: dict) -> bool:
    return (inner["x"] >= outer["x"] - 0.5 and inner["y"] >= outer["y"] - 0.5
            and inner["x"] + inner["width"] <= outer["x"] + outer["width"] + 0.5
            and inner["y"] + inner["height"] <= outer["y"] + outer["height"] + 0.5)


def options_are_separate_boxes(quiz) -> list:
    """Each option's box: none intersects another; each radio lies inside its own option."""
    quiz.scroll_into_view_if_needed()
    options = quiz.locator(".cl-quiz-choices .widget-radio-box label")
    assert options.count() >= 2
    # One measurement of the whole quiz (scrolling between measurements would move the boxes).
    measured = options.evaluate_all("""ls => ls.map(l => {
        const box = r => ({x: r.x, y: r.y, width: r.width, height: r.height});
        return {option: box(l.getBoundingClientRect()),
                radio: box(l.querySelector('input[type=radio]').getBoundingClientRect()),
                fits: l.scrollHeight <= l.clientHeight + 1, text: l.innerText};
    })""")
    for i, a in enumerate(measured):
        for b in measured[i + 1:]:
            assert not intersect(a["option"], b["option"]), (a, b)
        assert inside(a["radio"], a["option"]), a
        assert a["fits"], a  # the text fits its box: nothing runs onto the next option
    return options.all()
