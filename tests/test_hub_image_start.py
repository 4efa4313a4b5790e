"""A Zero to JupyterHub pod's home, as docs/jupyterhub.md's ``config.yaml`` makes it (issue 28).

The image repo2docker builds runs the repository's ``start`` at every start of a student's
server, before JupyterLab. The guide's Helm settings choose its hub layout; here ``start`` runs
with exactly the settings the guide's ``config.yaml`` gives, against a fresh home, with a
command in place of JupyterLab that says where it was started. The home then holds what the
TLJH route releases (the course directory's ``lessons/``, byte for byte, which
tests/test_browser_nbgrader_release.py opens unmodified in Chromium): each lesson once, every
link resolving beside the ``lesson2/`` of nbgrader's fetch, nothing a student had written over.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import yaml

from graders.nbgrader_plumbing.course import Course, write_hub_lessons
from graders.workspace.notebooks import kernel_language_info
from tests.conftest import ROOT
from tests.test_links import broken_links, relative_links

GUIDE = ROOT / "docs" / "jupyterhub.md"


def _helm_config() -> dict:
    text = GUIDE.read_text(encoding="utf-8")
    section = text[text.index("## Zero to JupyterHub"):text.index("## Binder")]
    [block] = [b for b in re.findall(r"```yaml\n(.*?)```", section, re.S) if "singleuser" in b]
    return yaml.safe_load(block)["singleuser"]


def _start(home: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    """The image's entry point as a pod runs it: ``start``, then the server's command (here one
    that prints its working folder)."""
    home.mkdir(exist_ok=True)
    environ = {"HOME": str(home), "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin",
               "LANG": "C.UTF-8", **env}
    return subprocess.run(["bash", str(ROOT / "start"), "python", "-c",
                           "import os; print(os.getcwd())"],
                          cwd=ROOT, env=environ, capture_output=True, text=True, timeout=120)


def test_the_guides_helm_settings_use_start_s_hub_layout_and_copy_nothing_themselves():
    config = _helm_config()
    assert config["extraEnv"] == {"CHECKPOINT_LAB_LAYOUT": "hub"}, config
    # a postStart that copies the image's lessons/ (the repository's) is what broke links
    assert "lifecycleHooks" not in config, config
    assert "cp -n /srv/checkpoint-lab/lessons" not in GUIDE.read_text(encoding="utf-8")


def test_a_fresh_home_gets_the_lessons_the_tljh_route_releases(tmp_path):
    env = {k: str(v) for k, v in _helm_config()["extraEnv"].items()}
    home = tmp_path / "jovyan"
    started = _start(home, env)
    assert started.returncode == 0, started.stderr
    assert started.stdout.strip().splitlines()[-1] == str(home), "JupyterLab opens in the home"
    lessons = sorted(p.name for p in (home / "lessons").iterdir())
    assert lessons == sorted(p.name for p in (ROOT / "lessons").glob("*.ipynb")), lessons
    assert not (home / "lesson2").exists(), "nbgrader's fetch refuses a lesson2/ already there"
    # the TLJH route's lessons: `checkpoint-lab course` writes them into the course directory
    course = Course(tmp_path / "course")
    course.root.mkdir()
    for released in write_hub_lessons(course, ROOT):
        assert (home / "lessons" / released.name).read_bytes() == released.read_bytes()
        language = json.loads(released.read_text())["metadata"]["language_info"]
        assert language == kernel_language_info()
    assert "added lessons/01_the_execution_scene_and_six_fields.ipynb" in started.stdout


def test_without_an_exchange_every_link_resolves_in_the_home(tmp_path):
    home = tmp_path / "jovyan"
    started = _start(home, {"CHECKPOINT_LAB_LAYOUT": "hub-with-exercises"})
    assert started.returncode == 0, started.stderr
    notebooks = sorted(home.rglob("*.ipynb"))
    assert {p.parent.name for p in notebooks} == {"lessons", "lesson2"}
    assert len([p for p in notebooks if p.parent.name == "lesson2"]) == 4
    assert sum("../lesson2/" in link for n in notebooks for link in relative_links(n)) >= 10
    assert broken_links(home, notebooks) == []


def test_a_restart_writes_over_nothing_the_student_has(tmp_path):
    home = tmp_path / "jovyan"
    mine = home / "lessons" / "02_two_save_points.ipynb"
    mine.parent.mkdir(parents=True)
    mine.write_text('{"mine": true}')
    started = _start(home, {"CHECKPOINT_LAB_LAYOUT": "hub"})
    assert started.returncode == 0, started.stderr
    assert mine.read_text() == '{"mine": true}'
    assert "02_two_save_points" not in started.stdout
    again = _start(home, {"CHECKPOINT_LAB_LAYOUT": "hub"})
    assert again.returncode == 0 and "added" not in again.stdout, again.stdout
    assert not [p for p in home.rglob(".*copy-tmp")]


def test_an_unknown_layout_is_named_and_jupyterlab_still_starts(tmp_path):
    home = tmp_path / "jovyan"
    started = _start(home, {"CHECKPOINT_LAB_LAYOUT": "hubb"})
    assert "CHECKPOINT_LAB_LAYOUT" in started.stderr and "hub" in started.stderr
    assert started.returncode == 0 and started.stdout.strip(), "JupyterLab is started all the same"
