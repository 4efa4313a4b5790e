"""The course's Jupyter server extension: what any JupyterLab started in its environment needs.

Enabled by ``etc/jupyter/jupyter_server_config.d/checkpoint_lab.json``, which the package installs
into the environment (``graders/data/jupyter/env/``, a data file of the wheel), so a plain
``jupyter lab`` on Binder or a JupyterHub has it as ``checkpoint-lab lab`` does. It registers
`graders.workspace.notebooks.before_save` as a pre-save hook (added to any the server already
has): a saved course notebook keeps a one-line "run this cell" in place of each widget, so a
reopened lesson says that instead of "Error displaying widget: model not found". And it hides
the lessons' jupytext twins (``lessons/NN_name.py`` beside ``lessons/NN_name.ipynb``) from the
file browser, so that a ``jupyter lab`` started in a checkout lists each lesson once
(:func:`jupytext_twins`; Jupyter reads no configuration from the folder it starts in).

The other files installed beside it do the rest without code: the news pop-up and update checks
off (``LabApp.news_url``, and ``share/jupyter/lab/settings/overrides.d/checkpoint_lab.json``), and
``etc/jupyter/nbgrader_config.py``, which makes nbgrader's Validate say what a check said.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["EXTENSION", "jupytext_twins"]

#: The module name the server configuration enables.
EXTENSION = "graders.workspace.jupyter_extension"


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    return [{"module": EXTENSION}]


def jupytext_twins(*roots) -> list[str]:
    """The names of the ``.py`` files in each of ``roots``' ``lessons/`` that have an ``.ipynb``
    of the same name beside them: the course's jupytext pairs, which a student should not see
    as a second copy of each lesson."""
    names = set()
    for root in roots:
        try:
            found = list((Path(root) / "lessons").glob("*.py"))
        except OSError:
            continue
        names.update(p.name for p in found if p.with_suffix(".ipynb").is_file())
    return sorted(names)


def _course_roots(serverapp) -> list[str]:
    from graders.workspace.notebooks import WorkspaceError, course_root

    roots = [getattr(serverapp, "root_dir", None) or "."]
    try:
        roots.append(str(course_root()))
    except (WorkspaceError, OSError):
        pass
    return roots


def _load_jupyter_server_extension(serverapp) -> None:
    from tornado.ioloop import IOLoop

    from graders.workspace.notebooks import before_save

    twins = jupytext_twins(*_course_roots(serverapp))

    def register() -> None:
        manager = serverapp.contents_manager
        if before_save not in getattr(manager, "_pre_save_hooks", []):
            manager.register_pre_save_hook(before_save)
        hidden = list(getattr(manager, "hide_globs", []))
        if twins and not set(twins) <= set(hidden):
            manager.hide_globs = hidden + [t for t in twins if t not in hidden]

    # Now, and again once every extension has loaded: an extension loaded after this one may put
    # a contents manager of its own in place (jupytext's does), without this hook.
    register()
    IOLoop.current().add_callback(register)
    serverapp.log.info("Checkpoint Lab: saved course notebooks keep a 'run this cell' line in "
                       "place of each widget")
