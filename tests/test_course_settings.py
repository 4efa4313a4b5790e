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


def test_the_course_directory_s_jupyterlab_shows_the_instructor_tools_a_student_env_hides(
        tmp_path):
    """A student's environment hides nbgrader's instructor tools (`checkpoint-lab doctor`); the
    course directory's JupyterLab is the instructor's and turns them back on."""
    from traitlets.config.loader import PyFileConfigLoader

    root = _course(tmp_path)
    write_course_settings(root)
    lab = PyFileConfigLoader(LAB_CONFIG, path=str(root)).load_config()
    extensions = lab.ServerApp.jpserver_extensions.get_value({})
    assert extensions["nbgrader.server_extensions.formgrader"] is True
    assert extensions["nbgrader.server_extensions.course_list"] is True
    hook = lab.ServerApp.tornado_settings.get_value({})["page_config_hook"]
    tools = ["@jupyter/nbgrader:formgrader", "@jupyter/nbgrader:course-list",
             "@jupyter/nbgrader:create-assignment"]
    page = hook(None, {"disabledExtensions": [*tools, "other:plugin"], "lockedExtensions": tools})
    assert page["disabledExtensions"] == ["other:plugin"] and page["lockedExtensions"] == []
