"""A real JupyterHub, set up as docs/jupyterhub.md says, and a class's first hour on it (issue 28).

JupyterHub with a local process spawner and a dummy authenticator, run as root in a mount
namespace of its own: ``/etc``, ``/home`` and ``/srv`` are overlays there, so the guide's
instructor commands run as written (``useradd -m``, ``/etc/login.defs``, ``/etc/skel``,
``/etc/jupyter``, ``/srv/nbgrader``) and the machine keeps none of it. The users' environment is
built once into ``.hub-cache/env`` (gitignored): the course installed with pip, not editable,
as the guide installs it, plus JupyterHub and the Python ``configurable-http-proxy``. Its
interpreter is bound into ``.hub-cache/python``, since a Python under a 0700 home (pyenv in
``/root``) cannot be run by the students.

Two students, ``jupyter-alice`` and ``jupyter-bob``, log in through ``/hub/login``, fetch
``lesson2`` from the exchange, find the lessons in ``~/lessons/``, open a lesson and an exercise,
and see no instructor tool in the Nbgrader menu (the menu part depends on the course's Jupyter
settings for students). Skipped, with the reason, where this cannot run (not root, no
``unshare`` or overlay mounts, no Chromium, no package index to build the environment).
"""

from __future__ import annotations

import csv
import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
import time
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import ROOT

pytestmark = [pytest.mark.hub, pytest.mark.browser, pytest.mark.nbgrader, pytest.mark.install,
              pytest.mark.timeout(1800)]

CACHE = ROOT / ".hub-cache"
ENV = CACHE / "env"
GUIDE = ROOT / "docs" / "jupyterhub.md"
STUDENTS = ("jupyter-alice", "jupyter-bob")
PASSWORD = "checkpoint-lab-hub-test"
TLJH = "## The Littlest JupyterHub"


def _guide_blocks() -> list[str]:
    """The TLJH section's bash blocks that the instructor runs on a machine that has TLJH,
    bubblewrap and strace already: from the private homes to the release of the exercises."""
    text = GUIDE.read_text(encoding="utf-8")
    section = text[text.index(TLJH):text.index("**Collect, grade, return**")]
    blocks = re.findall(r"```bash\n(.*?)```", section, re.S)
    return [b for b in blocks if "tljh.jupyter.org" not in b and "apparmor" not in b]


def test_the_guides_setup_blocks_fail_fast_and_keep_homes_private():
    """No hub needed: each block of several steps is its own bash with set -euo pipefail; homes
    are made 0700; the lessons are not an nbgrader assignment."""
    blocks = _guide_blocks()
    assert len(blocks) >= 5, blocks
    for block in blocks:
        lines = [line for line in block.splitlines() if line.strip()]
        if len(lines) > 1:
            assert lines[0] == "bash <<'SETUP'" and lines[1] == "set -euo pipefail", block
            assert lines[-1] == "SETUP", block
    text = GUIDE.read_text(encoding="utf-8")
    assert "HOME_MODE 0700" in text and 'chmod 0700 "$home"' in text
    assert "release_assignment lessons" not in text and "generate_assignment lessons" not in text
    assert "/etc/skel/lessons" in text


def _problem() -> str | None:
    if sys.platform != "linux" or os.geteuid() != 0:
        return "needs root on Linux (real Unix users, a mount namespace)"
    for tool in ("unshare", "useradd", "runuser", "git"):
        if shutil.which(tool) is None:
            return f"needs {tool}"
    probe = subprocess.run(["unshare", "-m", "--propagation", "private", "true"],
                           capture_output=True, text=True)
    if probe.returncode:
        return f"cannot make a mount namespace here: {probe.stderr.strip()}"
    return None


def _namespace_script(fake: Path, body: str) -> str:
    """``body`` in a mount namespace where /etc, /home and /srv are overlays (kept in
    ``fake``) and the interpreter is reachable by every user."""
    base = Path(sys.base_prefix).resolve()
    mounts = "\n".join(
        f"mkdir -p {fake}/{name}-upper {fake}/{name}-work\n"
        f"mount -t overlay overlay -o lowerdir=/{name},upperdir={fake}/{name}-upper,"
        f"workdir={fake}/{name}-work /{name}" for name in ("etc", "home", "srv"))
    return f"""set -euo pipefail
{mounts}
mkdir -p {CACHE}/python
mount --bind {base} {CACHE}/python
{body}
"""


def _build_env() -> None:
    """The users' environment, once: the course with pip as the guide installs it."""
    if all((ENV / "bin" / name).exists() for name in ("jupyterhub-singleuser", "checkpoint-lab")):
        return
    CACHE.mkdir(exist_ok=True)
    body = (f"{CACHE}/python/bin/python3 -m venv {ENV}\n"
            f"{ENV}/bin/pip install -q -c {ROOT}/constraints.txt {ROOT} jupyterhub "
            "configurable-http-proxy\n")
    fake = CACHE / "build-overlay"
    proc = subprocess.run(["unshare", "-m", "--propagation", "private", "bash", "-c",
                           _namespace_script(fake, body)], capture_output=True, text=True,
                          timeout=1200)
    shutil.rmtree(fake, ignore_errors=True)
    if proc.returncode:
        shutil.rmtree(ENV, ignore_errors=True)
        last = (proc.stderr.strip().splitlines() or ["no message"])[-1]
        pytest.skip(f"could not build the hub's environment (no package index?): {last}")


def _instructor_script(home: Path, port: int, hub_port: int, api_port: int, state: Path) -> str:
    """The guide's blocks as written (the repository cloned from this checkout, TLJH's
    environment replaced by ours, root as the instructor), then the two students, then the hub."""
    blocks = []
    for block in _guide_blocks():
        block = (block.replace("https://github.com/YOUR-ORG/checkpoint-lab", str(ROOT))
                 .replace("/opt/tljh/user", str(ENV))
                 .replace('sudo -u "$owner"', 'runuser -u "$owner" --')
                 .replace("sudo ", ""))
        blocks.append(block)
        if "HOME_MODE" in block:  # TLJH makes a student's home at their first login
            blocks.append("".join(f"useradd -m -s /bin/bash {s}\n" for s in STUDENTS))
    config = state / "jupyterhub_config.py"
    config.write_text(textwrap.dedent(f"""\
        c = get_config()
        c.JupyterHub.ip = "127.0.0.1"
        c.JupyterHub.port = {port}
        c.JupyterHub.hub_port = {hub_port}
        c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{api_port}"
        c.ConfigurableHTTPProxy.command = ["{ENV}/bin/configurable-http-proxy"]
        c.JupyterHub.authenticator_class = "dummy"
        c.DummyAuthenticator.password = "{PASSWORD}"
        c.Authenticator.allow_all = True
        c.JupyterHub.spawner_class = "localprocess"
        c.Spawner.cmd = ["{ENV}/bin/jupyterhub-singleuser"]
        c.Spawner.default_url = "/lab"
        c.Spawner.environment = {{"PATH": "{ENV}/bin:/usr/bin:/bin",
                                 "LD_LIBRARY_PATH": "{CACHE}/python/lib"}}
        c.Spawner.start_timeout = 120
        c.Spawner.http_timeout = 120
        c.JupyterHub.db_url = "sqlite:///{state}/jupyterhub.sqlite"
        c.JupyterHub.cookie_secret_file = "{state}/cookie_secret"
        c.JupyterHub.pid_file = "{state}/jupyterhub.pid"
        """), encoding="utf-8")
    steps = "\n".join(f"( cd ~ && {b.strip()}\n) || {{ echo 'GUIDE BLOCK FAILED'; exit 3; }}"
                      for b in blocks)
    return f"""export HOME={home}
export PATH={ENV}/bin:$PATH
git config --global --add safe.directory '*'
{steps}
echo GUIDE DONE
ls -ld /home/* > {state}/homes.txt
cd ~/checkpoint-lab-course
exec {ENV}/bin/jupyterhub -f {config}
"""


def _free_port() -> int:
    from tests.browser import free_port

    return free_port()


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    problem = _problem()
    if problem:
        pytest.skip(problem)
    _build_env()
    scratch = tmp_path_factory.mktemp("hub")
    state, home, fake = scratch / "state", scratch / "instructor", scratch / "overlay"
    for folder in (state, home, fake):
        folder.mkdir()
    port = _free_port()
    script = _namespace_script(fake, _instructor_script(home, port, _free_port(), _free_port(),
                                                        state))
    log = open(scratch / "hub.log", "w")
    proc = subprocess.Popen(["unshare", "-m", "--propagation", "private", "bash", "-c", script],
                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 900
        while True:
            text = (scratch / "hub.log").read_text(errors="replace")
            if proc.poll() is not None:
                pytest.fail(f"the hub or the guide's commands stopped:\n{text[-4000:]}")
            try:
                urllib.request.urlopen(f"{url}/hub/login", timeout=5)
                break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail(f"the hub did not answer:\n{text[-4000:]}")
                time.sleep(2)
        yield {"url": url, "state": state, "home": home, "fake": fake, "log": scratch / "hub.log",
               "proc": proc}
    finally:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=30)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            os.killpg(proc.pid, signal.SIGKILL)
        log.close()
        shutil.rmtree(fake, ignore_errors=True)


def test_the_guides_instructor_commands_ran_as_written_and_homes_are_private(hub):
    log = hub["log"].read_text(errors="replace")
    assert "GUIDE DONE" in log, log[-4000:]
    homes = (hub["state"] / "homes.txt").read_text()
    for student in STUDENTS:
        line = next(line for line in homes.splitlines() if line.endswith(f"/home/{student}"))
        assert line.startswith("drwx------"), homes
    home = hub["fake"] / "home-upper"
    for student in STUDENTS:
        lessons = sorted(p.name for p in (home / student / "lessons").glob("*.ipynb"))
        assert lessons == sorted(p.name for p in (ROOT / "lessons").glob("*.ipynb")), lessons


def _login(browser, hub, student: str):
    from tests.browser import TIMEOUT_MS, shot

    page = browser.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(f"{hub['url']}/hub/login")
    page.fill("input[name=username]", student)
    page.fill("input[name=password]", PASSWORD)
    page.click("input[type=submit], button[type=submit]")
    page.wait_for_url(re.compile(r".*/(hub/spawn-pending|user)/.*"))
    deadline = time.monotonic() + 240  # the first start takes seconds to a minute or two
    while "/user/" not in page.url or "/lab" not in page.url:
        if time.monotonic() > deadline:
            shot(page, f"39-hub-{student}-not-started")
            pytest.fail(f"{student}'s server did not start: {page.url}\n"
                        + hub["log"].read_text(errors="replace")[-3000:])
        time.sleep(5)
        page.goto(f"{hub['url']}/user/{student}/lab")
    page.locator(".jp-DirListing").first.wait_for()
    return page


def _fetch(page, hub, student: str, assignment: str) -> dict:
    # one _xsrf cookie per path (the hub's, each student's server's): this student's
    cookies = [c for c in page.context.cookies() if c["name"] == "_xsrf"]
    xsrf = next((c["value"] for c in cookies if c["path"].startswith(f"/user/{student}")),
                cookies[-1]["value"] if cookies else "")
    response = page.request.post(
        f"{hub['url']}/user/{student}/assignments/fetch",
        form={"course_id": "checkpoint-lab", "assignment_id": assignment},
        headers={"X-XSRFToken": xsrf})
    assert response.ok, response.text()[:2000]
    return response.json()


#: Instructor tools nbgrader's extensions offer (JupyterLab's labels, compared lower-cased).
INSTRUCTOR_TOOLS = {"formgrader", "formgrader (local)", "course list", "create assignment"}


def test_students_log_in_fetch_and_open_a_lesson_and_an_exercise(hub, browser):
    from tests.browser import shot

    hub["menus"] = {}
    for student in STUDENTS:
        page = _login(browser, hub, student)
        try:
            answer = _fetch(page, hub, student, "lesson2")
            assert answer.get("success"), answer
            home = hub["fake"] / "home-upper" / student
            assert (home / "lesson2" / "02_two_latent_failures.ipynb").exists()
            for path in ("lessons/01_the_execution_scene_and_six_fields.ipynb",
                         "lesson2/02_two_latent_failures.ipynb"):
                page.goto(f"{hub['url']}/user/{student}/lab/tree/{path}")
                page.locator(".jp-Notebook .jp-Cell").first.wait_for()
                shot(page, f"40-hub-{student}-{Path(path).stem}")
            page.get_by_role("menuitem", name="Nbgrader").click()
            items = [t.strip() for t in page.locator(".lm-Menu-itemLabel").all_inner_texts()
                     if t.strip()]
            shot(page, f"41-hub-{student}-nbgrader-menu")
            page.keyboard.press("Escape")
            hub["menus"][student] = items
            page.goto(f"{hub['url']}/hub/logout")  # the next student logs in on this browser
        finally:
            page.close()
    # the private homes hold: one student cannot list another's home
    home = hub["fake"] / "home-upper" / STUDENTS[1]
    assert oct(home.stat().st_mode & 0o777) == "0o700"


def test_students_see_no_instructor_tool(hub):
    """The Nbgrader menu of a student's JupyterLab holds the assignment list alone (the course's
    Jupyter settings for students decide it)."""
    if not hub.get("menus"):
        pytest.skip("no student got as far as the menu (see the test before)")
    for student, items in hub["menus"].items():
        assert "Assignment List" in items, (student, items)
        assert not INSTRUCTOR_TOOLS & {i.lower() for i in items}, (student, items)


def test_nbgrader_export_has_no_lessons_row(hub, tmp_path):
    """The guide's `nbgrader export`, in the course directory: a row per student for lesson2
    alone (the lessons are no assignment)."""
    course = hub["home"] / "checkpoint-lab-course"
    script = _namespace_script(tmp_path, f"cd {course}\n{ENV}/bin/nbgrader export")
    run = subprocess.run(["unshare", "-m", "--propagation", "private", "bash", "-c", script],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    with open(course / "grades.csv", newline="") as f:
        assignments = {row["assignment"] for row in csv.DictReader(f)}
    assert assignments <= {"lesson2"}, assignments
