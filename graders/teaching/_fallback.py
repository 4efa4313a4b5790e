"""A text fallback for ipywidgets: what a widget shows where no widget frontend exists."""

from __future__ import annotations

__all__ = ["TextFallback"]


class TextFallback:
    """Mix into an ipywidgets class before the widget base; define ``fallback_text()``.

    JupyterLab renders the widget; a frontend without widgets (nbconvert to text, a terminal,
    GitHub's notebook view) shows the ``text/plain`` part of the output, which this mixin fills
    with ``fallback_text()`` instead of the widget's repr.
    """

    def fallback_text(self) -> str:  # pragma: no cover - every view overrides it
        raise NotImplementedError

    def _repr_mimebundle_(self, **kwargs):
        data = super()._repr_mimebundle_(**kwargs)
        data["text/plain"] = self.fallback_text()
        return data
