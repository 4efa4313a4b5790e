"""Feedback loads nothing from the network (issue 28 item 5, issue 29 item 6), checked without
nbgrader: the sanitizer drops every remote image source a student can write, and the course's
feedback template has no MathJax and a Content-Security-Policy. The feedback nbgrader really makes
is checked in ``tests/test_nbgrader_harms.py`` (``test_the_feedback_loads_nothing_...``)."""

from __future__ import annotations

import pytest

from graders.nbgrader_plumbing.nbgrader_fixes import FEEDBACK_TEMPLATES, template_basedirs
from graders.nbgrader_plumbing.safe_html import markdown_html, safe_html
from graders.nbgrader_plumbing.settings import config_lines
from tests.test_nbgrader_harms import PAYLOAD, _Loads

REMOTE = [
    "![a pixel](https://tracker.invalid/a.png)",
    "![a pixel](//tracker.invalid/a.png)",
    '<img src="https://tracker.invalid/a.gif">',
    '<img src=" HTTPS://tracker.invalid/a.gif">',
    '<img srcset="https://tracker.invalid/a.png 2x" src="data:image/png;base64,AAAA">',
    '<picture><source srcset="https://tracker.invalid/a.png"><img></picture>',
    '<span style="background-image: url(&quot;https://tracker.invalid/a.png&quot;)">x</span>',
    '<div style="background:url(//tracker.invalid/a.png)">x</div>',
    '<table background="https://tracker.invalid/a.png"><tr><td>x</td></tr></table>',
    '<video poster="https://tracker.invalid/a.png"></video>',
    '<svg><image href="https://tracker.invalid/a.png"/></svg>',
    '<link rel="stylesheet" href="https://tracker.invalid/a.css">',
    '<style>@import url(https://tracker.invalid/a.css);</style>',
    '<iframe src="https://tracker.invalid/"></iframe>',
]


def _loads(html: str) -> list[str]:
    parser = _Loads()
    parser.feed(html)
    return parser.found


@pytest.mark.parametrize("source", [*REMOTE, PAYLOAD])
def test_a_remote_source_in_a_written_answer_is_never_loaded(source):
    assert _loads(markdown_html(source))  # unsanitized, the page would load it
    html = safe_html(markdown_html(source))
    assert _loads(html) == [], html
    assert not [tag for tag in ("<style", "<link", "<iframe", "<svg", "<source")
                if tag in html.lower()], html


def test_an_embedded_image_is_kept():
    image = '<img src="data:image/png;base64,iVBORw0KGgo=" alt="a plot">'
    assert 'src="data:image/png;base64,iVBORw0KGgo="' in safe_html(image)


def test_the_feedback_template_loads_nothing_and_forbids_loads():
    text = (FEEDBACK_TEMPLATES / "feedback" / "index.html.j2").read_text(encoding="utf-8")
    assert "mathjax()" not in text.lower().replace(" ", "")
    assert "<script" not in text and "https://" not in text
    assert "Content-Security-Policy" in text and "default-src 'none'" in text
    dirs = template_basedirs()
    assert dirs[0] == str(FEEDBACK_TEMPLATES) and dirs[1].endswith("templates")
    assert "c.HTMLExporter.extra_template_basedirs = _template_basedirs()" in config_lines()
