"""The course directory's settings for the instructor's side: exchange, feedback, JupyterLab.

:func:`write_course_settings` runs at the end of ``checkpoint-lab course`` (after
`graders.nbgrader_plumbing.course` has written ``nbgrader_config.py``) and adds:

- to ``nbgrader_config.py``: a course id and an exchange inside the course directory
  (``exchange/``, created), so that formgrader does not warn that nbgrader's default exchange
  ``/usr/local/share/nbgrader/exchange`` does not exist, and release and collect work offline
  (its mode is what ``release_assignment`` wants, so it does not warn); the feedback
  preprocessors (`graders.nbgrader_plumbing.feedback`: wrapped text, written answers that await
  marking, answers joined from split cells); students' HTML made inert in the feedback and in
  formgrader (`graders.nbgrader_plumbing.safe_html`);
- ``jupyter_lab_config.py`` and ``.jupyter/``: JupyterLab for this directory with no Jupyter news
  question (it covers formgrader's cells), no update check, and, as root in a container, no
  refusal to start as root. Start it with
  ``jupyter lab --config=jupyter_lab_config.py`` (:data:`LAB_COMMAND`) in the course directory.
"""

from __future__ import annotations

import json
from pathlib import Path

__all__ = ["COURSE_ID", "LAB_COMMAND", "LAB_CONFIG", "SAFE_MARKDOWN", "EXCHANGE_MODE",
           "config_lines", "write_course_settings"]

#: The course id in the course directory's nbgrader config (the exchange's folder name).
COURSE_ID = "checkpoint-lab"
#: The JupyterLab config file written into the course directory.
LAB_CONFIG = "jupyter_lab_config.py"
#: How the instructor opens the course directory in JupyterLab (run in the course directory).
LAB_COMMAND = f"jupyter lab --config={LAB_CONFIG}"

_MARK = "# --- checkpoint-lab course settings (graders.nbgrader_plumbing.settings) ---"
#: The preprocessor that makes students' HTML inert (`graders.nbgrader_plumbing.safe_html`).
SAFE_MARKDOWN = "graders.nbgrader_plumbing.safe_html.SafeMarkdown"
_FIXES = "graders.nbgrader_plumbing.nbgrader_fixes"
#: The exchange's mode: what nbgrader's release_assignment wants (rwx for all, or it warns and
#: changes it), with the sticky bit of /tmp (only the owner of an entry may remove it).
EXCHANGE_MODE = 0o1777
_SETTINGS = Path(__file__).resolve().parents[1] / "data" / "jupyter" / "user-settings"

_LAB_CONFIG_TEXT = f'''\
"""JupyterLab for this course directory (written by `checkpoint-lab course`).

Start it here with:  {LAB_COMMAND}
No Jupyter news question (it would cover formgrader's cells) and no update check; JupyterLab's
settings for this directory are kept in .jupyter/ beside this file.
"""

import os

c = get_config()  # noqa: F821 (traitlets provides get_config)

_here = os.path.dirname(os.path.abspath(__file__))
c.LabApp.news_url = None
c.LabApp.check_for_updates_class = "jupyterlab.handlers.announcements.NeverCheckForUpdate"
c.LabApp.user_settings_dir = os.path.join(_here, ".jupyter", "lab", "user-settings")
c.LabApp.workspaces_dir = os.path.join(_here, ".jupyter", "lab", "workspaces")
# Jupyter refuses to start as root (anything opened runs as root). In a container, where root
# is the one user (Docker's default, a course image), that is what there is: allow it there.
# Elsewhere, as root, add --allow-root yourself if you mean it.
_in_container = os.path.exists("/.dockerenv") or os.path.exists("/run/.containerenv")
if hasattr(os, "geteuid") and os.geteuid() == 0 and _in_container:
    c.ServerApp.allow_root = True

# A student's environment hides nbgrader's instructor tools (`checkpoint-lab doctor`); this
# JupyterLab is the instructor's, so they show here whatever the environment is.
_TOOLS = ("@jupyter/nbgrader:formgrader", "@jupyter/nbgrader:course-list",
          "@jupyter/nbgrader:create-assignment")
c.ServerApp.jpserver_extensions.update({{"nbgrader.server_extensions.formgrader": True,
                                        "nbgrader.server_extensions.course_list": True}})


def _show_instructor_tools(handler, page_config):
    for key in ("disabledExtensions", "lockedExtensions"):
        page_config[key] = [name for name in page_config.get(key, []) if name not in _TOOLS]
    return page_config


c.ServerApp.tornado_settings.update({{"page_config_hook": _show_instructor_tools}})
'''


def config_lines() -> str:
    """What :func:`write_course_settings` adds to the course's ``nbgrader_config.py``."""
    feedback = ["nbgrader.preprocessors.GetGrades",
                "nbconvert.preprocessors.CSSHTMLHeaderPreprocessor",
                "graders.nbgrader_plumbing.feedback.FeedbackNotes"]
    return "\n".join([
        "",
        _MARK,
        "import os as _os  # noqa: E402",
        "",
        "_course = _os.path.dirname(_os.path.abspath(__file__))",
        "# A course id and an exchange in this folder: release and collect work offline, and",
        "# formgrader finds the exchange. For a shared exchange, set c.Exchange.root here (again",
        "# after each `checkpoint-lab course`, which rewrites this file).",
        f"c.CourseDirectory.course_id = {COURSE_ID!r}",
        'c.Exchange.root = _os.path.join(_course, "exchange")',
        "# The feedback wraps long lines and says which written answers await marking.",
        "c.GenerateFeedback.preprocessors = [",
        *(f"    {name!r}," for name in feedback),
        "]",
        "# Students' markdown and raw cells rendered, then sanitized (no script, no event",
        "# attributes, no javascript: links), in the feedback and in formgrader alike: both",
        "# convert with HTMLExporter, which runs these before anything else.",
        f"c.HTMLExporter.preprocessors = [{SAFE_MARKDOWN!r}]",
        "# The feedback page loads nothing from the network: the course's feedback template",
        "# (no MathJax from a CDN, a Content-Security-Policy), found before nbgrader's own.",
        f"from {_FIXES} import (  # noqa: E402",
        "    add_submission_without_autoflush as _no_autoflush,",
        "    template_basedirs as _template_basedirs,",
        ")",
        "",
        "c.HTMLExporter.extra_template_basedirs = _template_basedirs()",
        "# nbgrader builds each new submission with SQLAlchemy's autoflush off (no SAWarning).",
        "_no_autoflush()",
        "",
    ])


def write_course_settings(root: Path) -> None:
    """Add the settings to the course directory ``root`` (its nbgrader_config.py must exist)."""
    root = Path(root)
    config = root / "nbgrader_config.py"
    text = config.read_text(encoding="utf-8")
    if _MARK in text:
        text = text[: text.index(_MARK)].rstrip("\n") + "\n"
    config.write_text(text + config_lines(), encoding="utf-8")
    exchange = root / "exchange"
    exchange.mkdir(exist_ok=True)
    exchange.chmod(EXCHANGE_MODE)
    (root / LAB_CONFIG).write_text(_LAB_CONFIG_TEXT, encoding="utf-8")
    settings = root / ".jupyter" / "lab" / "user-settings"
    for name in ("@jupyterlab/apputils-extension/notification.jupyterlab-settings",):
        target = settings / name
        target.parent.mkdir(parents=True, exist_ok=True)
        wanted = json.loads((_SETTINGS / name).read_text(encoding="utf-8"))
        if target.exists():
            try:
                current = json.loads(target.read_text(encoding="utf-8"))
            except ValueError:
                continue  # edited by hand (JSON5 with comments): the instructor's
            if isinstance(current, dict):
                wanted = {**current, **wanted}
        target.write_text(json.dumps(wanted, indent=2) + "\n", encoding="utf-8")

