"""Student HTML made inert in the feedback and in formgrader: markdown rendered, then sanitized.

A written answer is markdown, and markdown may hold raw HTML (``<script>``, ``<img onerror=...>``)
and links to ``javascript:`` URLs, which nbgrader's feedback page and formgrader (served from the
instructor's own Jupyter server) would otherwise render live. nbconvert's own ``SanitizeHTML``
cleans the markdown *source*, where a markdown link is not HTML yet, and nbgrader's templates
ignore nbconvert's ``sanitize_html``; so :class:`SafeMarkdown` renders each markdown cell with
nbconvert's own renderer first, then cleans the HTML with bleach (the library nbconvert
sanitizes with): an allowlist of tags, no event attributes or ``style``, links to http(s) and
mailto only, images from embedded image data only (a remote ``src``, a tracking pixel for
whoever opens the feedback, is dropped; ``srcset`` and ``style`` are never kept). The result goes
back into the cell as one ``<div>`` block, which the template's markdown renderer passes through
unchanged. Raw cells are cleaned the same way.

The course's ``nbgrader_config.py`` names it for ``HTMLExporter``, the exporter of both
``generate_feedback`` and formgrader (`graders.nbgrader_plumbing.settings`).
"""

from __future__ import annotations

import re

import bleach
from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath
from nbconvert.preprocessors import Preprocessor

__all__ = ["SafeMarkdown", "safe_html", "markdown_html"]

#: What the course's own markdown and nbconvert's renderer make, and nothing that runs.
TAGS = frozenset({
    "a", "abbr", "b", "blockquote", "br", "code", "dd", "del", "details", "div", "dl", "dt",
    "em", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i", "img", "kbd", "li", "ol", "p", "pre",
    "s", "span", "strong", "sub", "summary", "sup", "table", "tbody", "td", "tfoot", "th",
    "thead", "tr", "ul",
})
_HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
_IMAGE_DATA = re.compile(r"data:image/(png|jpeg|gif|webp|svg\+xml);", re.I)
_LINK = re.compile(r"(https?:|mailto:|#|[^:]*$)", re.I)  # absolute web, mail, or relative


def _attribute(tag: str, name: str, value: str) -> bool:
    if name in ("class", "title") or (name == "id" and tag in _HEADINGS):
        return True
    if tag == "a" and name == "href":
        return bool(_LINK.match(value.strip()))
    if tag == "img" and name in ("alt", "width", "height"):
        return True
    if tag == "img" and name == "src":
        return bool(_IMAGE_DATA.match(value.strip()))
    return tag in ("td", "th") and name in ("align", "colspan", "rowspan")


def safe_html(html: str) -> str:
    """``html`` with only the allowed tags and attributes; anything else escaped as text."""
    return bleach.clean(html, tags=TAGS, attributes=_attribute,
                        protocols=["http", "https", "mailto", "data"], strip_comments=True)


def markdown_html(source: str, attachments: dict | None = None) -> str:
    """``source`` rendered to HTML as nbconvert renders a markdown cell (math kept for MathJax)."""
    renderer = IPythonRenderer(escape=False, attachments=attachments or {})
    return MarkdownWithMath(renderer=renderer).render(source)


def _one_block(html: str) -> str:
    """``html`` as one ``<div>`` on one line: a markdown renderer passes it through as it is
    (a line break in text is the same character as ``&#10;``)."""
    return '<div class="checkpoint-lab-markdown">' + html.replace("\n", "&#10;") + "</div>"


class SafeMarkdown(Preprocessor):
    """Render every markdown cell and clean it (:func:`safe_html`); clean every raw cell."""

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type == "markdown" and cell.source.strip():
            html = markdown_html(cell.source, cell.get("attachments"))
            cell.source = _one_block(safe_html(html))
            cell.pop("attachments", None)  # already in the HTML, as data
        elif cell.cell_type == "raw":
            cell.source = safe_html(cell.source)
        return cell, resources
