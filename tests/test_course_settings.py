"""graders.nbgrader_plumbing.settings: what `checkpoint-lab course` adds for the instructor's
side."""

from __future__ import annotations

import json

from graders.nbgrader_plumbing.course import load_config, nbgrader_api
from graders.nbgrader_plumbing.settings import COURSE_ID, LAB_CONFIG, write_course_settings

BASE = "c = get_config()  # noqa: F821\nc.CourseDirectory.root = {root!r}\n"


def _course(tmp_path):
    root = tmp_path / "course"
    root.mkdir()
    (root / "nbgrader_config.py").write_text(BASE.format(root=str(root)))
    return root


def test_formgrader_finds_an_exchange_and_a_course_id(tmp_path):
    root = _course(tmp_path)
    write_course_settings(root)
    config = load_config(root)
    assert config.CourseDirectory.course_id == COURSE_ID
    assert config.Exchange.root == str(root / "exchange") and (root / "exchange").is_dir()
    api = nbgrader_api(root)
    assert not api.exchange_missing and api.exchange_is_functional
    feedback = config.GenerateFeedback.preprocessors
    assert "graders.nbgrader_plumbing.feedback.FeedbackNotes" in feedback


def test_a_rebuild_writes_the_settings_once(tmp_path):
    root = _course(tmp_path)
    write_course_settings(root)
    write_course_settings(root)
    text = (root / "nbgrader_config.py").read_text()
    assert text.count("c.Exchange.root = ") == 1 and text.startswith("c = get_config()")


def test_jupyterlab_in_the_course_directory_asks_no_news_question(tmp_path):
    root = _course(tmp_path)
    settings = (root / ".jupyter" / "lab" / "user-settings" / "@jupyterlab" /
                "apputils-extension" / "notification.jupyterlab-settings")
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps({"doNotDisturbMode": True}))
    write_course_settings(root)
    assert json.loads(settings.read_text()) == {"doNotDisturbMode": True, "fetchNews": "false",
                                                "checkForUpdates": False}
    from traitlets.config.loader import PyFileConfigLoader

    lab = PyFileConfigLoader(LAB_CONFIG, path=str(root)).load_config()
    assert lab.LabApp.news_url is None
    assert lab.LabApp.user_settings_dir == str(root / ".jupyter" / "lab" / "user-settings")
