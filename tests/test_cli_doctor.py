"""``checkpoint-lab doctor``: the course's Jupyter settings in an environment, whatever made it
(issue 28 item 1). An editable install (course.py's ``.venv``) copies none of pyproject's data
files; doctor writes them into ``sys.prefix``, idempotently, and a real ``jupyter lab`` reading
that prefix then asks no news question, runs the course's server extension and, in a student's
environment, hides nbgrader's instructor tools."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import tomllib
import urllib.request
from pathlib import Path

import pytest

from graders.cli import main
from graders.cli.doctor import ROLE_FILE, examine, repair, role
from tests.browser import free_port

ROOT = Path(__file__).resolve().parents[1]
TOOLS = {"@jupyter/nbgrader:formgrader", "@jupyter/nbgrader:course-list",
         "@jupyter/nbgrader:create-assignment"}
STUDENT_FILES = {"etc/jupyter/labconfig/page_config.d/checkpoint_lab_students.json",
                 "etc/jupyter/jupyter_server_config.d/zz_checkpoint_lab_no_instructor_tools.json"}


def _installed(prefix: Path) -> set[str]:
    return {p.relative_to(prefix).as_posix() for p in prefix.rglob("*")
            if p.is_file() and "checkpoint-lab" not in p.parts}


def test_doctor_reports_an_empty_environment_and_repair_fills_it_once(tmp_path, capsys):
    assert main(["doctor", "--prefix", str(tmp_path)]) == 1
    report = capsys.readouterr().out
    assert "5 of the course's Jupyter settings" in report and "is missing" in report
    assert "checkpoint-lab doctor --repair" in report
    assert main(["doctor", "--repair", "--prefix", str(tmp_path)]) == 0
    assert report.count("is missing") == len(capsys.readouterr().out.splitlines()) - 1
    assert "etc/jupyter/nbgrader_config.py" in _installed(tmp_path)
    assert STUDENT_FILES <= _installed(tmp_path) and role(tmp_path) == "student"
    stamps = {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*") if p.is_file()}
    assert repair(tmp_path) == [], "a second repair must change nothing"
    assert {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*") if p.is_file()} == stamps
    assert main(["doctor", "--prefix", str(tmp_path)]) == 0


def test_doctor_puts_back_a_file_someone_changed(tmp_path, capsys):
    repair(tmp_path)
    overrides = tmp_path / "share/jupyter/lab/settings/overrides.d/checkpoint_lab.json"
    overrides.write_text("{}")
    [finding] = [f for f in examine(tmp_path) if f.problem]
    assert finding.path == overrides and finding.problem == "differs from the course's"
    main(["doctor", "--repair", "--quiet", "--prefix", str(tmp_path)])
    assert "wrote" in capsys.readouterr().out
    assert json.loads(overrides.read_text())[
        "@jupyterlab/apputils-extension:notification"]["fetchNews"] == "false"


def test_an_instructor_s_environment_keeps_the_instructor_tools_through_later_repairs(tmp_path):
    repair(tmp_path)
    assert main(["doctor", "--instructor", "--prefix", str(tmp_path)]) == 0
    assert not STUDENT_FILES & _installed(tmp_path)
    assert (tmp_path / ROLE_FILE).read_text().strip() == "instructor"
    assert repair(tmp_path) == [] and not STUDENT_FILES & _installed(tmp_path)
    assert main(["doctor", "--student", "--prefix", str(tmp_path)]) == 0
    assert STUDENT_FILES <= _installed(tmp_path)


def test_a_read_only_environment_is_one_clear_line(tmp_path, capsys):
    if os.geteuid() == 0:
        blocker = tmp_path / "etc"
        blocker.write_text("a file where a folder must be")
    else:
        tmp_path.chmod(0o500)
    assert main(["doctor", "--repair", "--prefix", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("checkpoint-lab doctor: cannot write the course's Jupyter settings")
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_pip_install_dot_copies_the_same_files_doctor_writes(tmp_path):
    """A wheel (Binder, TLJH, Z2JH) and doctor agree: pyproject's data files are exactly the files
    doctor writes for a student's environment."""
    files = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["data-files"]
    from_wheel = {f"{target}/{Path(source).name}" for target, sources in files.items()
                  for source in sources}
    repair(tmp_path)
    assert from_wheel == _installed(tmp_path)


def _page_config(port: int, token: str) -> dict:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/lab?token={token}", timeout=30) as page:
        html = page.read().decode()
    data = re.search(r'id="jupyter-config-data" type="application/json">(.*?)</script>', html, re.S)
    return json.loads(data.group(1))


@pytest.mark.browser
@pytest.mark.timeout(600)
def test_a_plain_jupyter_lab_in_the_editable_venv_hides_the_instructor_tools_and_the_news(
        tmp_path):
    """The course's own .venv (editable; course.py ran doctor): a plain ``jupyter lab`` there, as
    README's ``source .venv/bin/activate; jupyter lab`` starts it, with a new user's settings."""
    from tests.browser import plain_jupyter_env

    assert examine(Path(sys.prefix)) and not [f for f in examine(Path(sys.prefix)) if f.problem], \
        "course.py runs `checkpoint-lab doctor --repair` after installing .venv"
    port, token = free_port(), os.urandom(8).hex()
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER", "CHECKPOINT"))}
    env.update(plain_jupyter_env(home), JUPYTER_TOKEN=token,
               JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"))
    cmd = [str(Path(sys.executable).parent / "jupyter"), "lab", "--no-browser", "--allow-root",
           f"--ServerApp.port={port}", "--ServerApp.port_retries=0"]
    log = tmp_path / "lab.log"
    with log.open("wb") as out:
        process = subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=out,
                                   stderr=subprocess.STDOUT, start_new_session=True)
    try:
        for _ in range(240):
            try:
                config = _page_config(port, token)
                break
            except OSError:
                if process.poll() is not None:
                    raise AssertionError(log.read_text()) from None
                time.sleep(0.5)
        else:
            raise AssertionError(f"jupyter lab never answered:\n{log.read_text()}")
        assert TOOLS <= set(config["disabledExtensions"]), config["disabledExtensions"]
        assert TOOLS <= set(config["lockedExtensions"]), "a student could turn them back on"
        settings_url = (f"http://127.0.0.1:{port}/lab/api/settings/"
                        f"@jupyterlab/apputils-extension:notification?token={token}")
        with urllib.request.urlopen(settings_url, timeout=30) as answer:
            schema = json.loads(answer.read())["schema"]["properties"]
        assert schema["fetchNews"]["default"] == "false"
        text = log.read_text()
        assert "Checkpoint Lab: saved course notebooks keep a 'run this cell' line" in text
        assert "formgrader | extension was successfully linked" not in text
        assert "No nbgrader_config.py file found" not in text
    finally:
        os.killpg(process.pid, 15)
        process.wait(timeout=30)
