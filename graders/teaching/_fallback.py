"""What a widget shows where no widget frontend exists, or once its notebook is reopened."""

from __future__ import annotations

__all__ = ["RERUN_KEY", "TextFallback"]

#: The key of a widget output's metadata that holds its one-line "run this cell" hint.
#: `graders.workspace.notebooks.before_save` puts that line in place of the widget when the notebook
#: is saved, so a reopened notebook says what to do instead of "Error displaying widget".
RERUN_KEY = "checkpoint_lab_rerun"


class TextFallback:
    """Mix into an ipywidgets class before the widget base; define ``fallback_text()``.

    JupyterLab renders the widget; a frontend without widgets (nbconvert to text, a terminal,
    GitHub's notebook view) shows the ``text/plain`` part of the output, which this mixin fills
    with ``fallback_text()`` instead of the widget's repr. ``rerun_hint`` is the line a saved,
    reopened notebook shows in the widget's place (the widget's state lives in the kernel).
    """

    rerun_hint = "Run this cell to see the widget: widgets need the running kernel."

    def fallback_text(self) -> str:  # pragma: no cover - every view overrides it
        raise NotImplementedError

    def _repr_mimebundle_(self, **kwargs):
        data = super()._repr_mimebundle_(**kwargs)
        data["text/plain"] = self.fallback_text()
        return data, {RERUN_KEY: self.rerun_hint}

    def _ipython_display_(self) -> None:
        # The widget, then the script that makes it usable from the keyboard and by a screen
        # reader (graders.teaching.style.A11Y_JS); a saved notebook drops the script.
        from IPython.display import display

        from graders.teaching.style import A11Y_JS

        data, metadata = self._repr_mimebundle_()
        display(data, metadata=metadata, raw=True)
        display({"application/javascript": A11Y_JS, "text/plain": ""},
                metadata={RERUN_KEY: ""}, raw=True)
