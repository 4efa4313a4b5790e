"""Code and diffs shown in a lesson: whole lines, never broken mid-word, readable in any theme.

JupyterLab's output area wraps a ``<pre>`` anywhere (``word-break: break-all``), so a long line
of IPython's ``Code`` breaks in the middle of a name. `show_code` and `show_diff` keep each line
whole (a wide one scrolls sideways) on a light panel of their own, so a dark theme keeps it
readable. `unified_diff` lines up the lines that matter rather than blank ones: difflib's
plain diff pairs a blank line first and then shows one moved line as both removed and added.

    >>> show_code(function_source("reference", "run_agent"))
    >>> show_diff(before, after, "run_agent (the starter)", "run_agent (the reference)")
"""

from __future__ import annotations

import difflib
import html
from collections.abc import Iterable

from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_by_name

__all__ = ["CodeView", "show_code", "show_diff", "unified_diff"]

_PANEL = ("background:#f6f8fa;color:#101828;border:1px solid #d0d5dd;border-radius:4px;"
          "padding:0.5em 0.8em;margin:0;overflow-x:auto;white-space:pre;word-break:normal;"
          "overflow-wrap:normal;line-height:1.45")
_DIFF_LINES = {"+": "background:#dafbe1", "-": "background:#ffebe9", "@": "color:#475467"}


def _is_blank(line: str) -> bool:
    return not line.strip()


def unified_diff(before: Iterable[str], after: Iterable[str], fromfile: str = "",
                 tofile: str = "", n: int = 2) -> str:
    """A unified diff of two lists of lines, anchored on lines with text, not on blank ones."""
    a = [line if line.endswith("\n") else line + "\n" for line in before]
    b = [line if line.endswith("\n") else line + "\n" for line in after]
    matcher = difflib.SequenceMatcher(_is_blank, a, b, autojunk=False)
    out = []
    for group in matcher.get_grouped_opcodes(n):
        if not out:
            out += [f"--- {fromfile}\n", f"+++ {tofile}\n"]
        first, last = group[0], group[-1]
        out.append(f"@@ -{_range(first[1], last[2])} +{_range(first[3], last[4])} @@\n")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                out += [" " + line for line in a[i1:i2]]
                continue
            out += ["-" + line for line in a[i1:i2]]
            out += ["+" + line for line in b[j1:j2]]
    return "".join(out)


def _range(start: int, stop: int) -> str:
    length = stop - start
    begin = start + 1 if length else start
    return str(begin) if length == 1 else f"{begin},{length}"


class CodeView:
    """Source code (or a diff) shown whole-line: HTML in a notebook, the text elsewhere."""

    def __init__(self, source: str, language: str = "python") -> None:
        self.source = source
        self.language = language

    def _repr_html_(self) -> str:
        if self.language == "diff":
            rows = []
            for line in self.source.splitlines():
                style = _DIFF_LINES.get(line[:1], "")
                rows.append(f'<span class="cl-diff-line" style="display:block;{style}">'
                            f"{html.escape(line) or ' '}</span>")
            body = "".join(rows)
        else:
            formatter = HtmlFormatter(noclasses=True, nowrap=True, style="default")
            body = highlight(self.source, get_lexer_by_name(self.language), formatter)
        return (f'<pre class="cl-code" data-language="{html.escape(self.language)}" '
                f'style="{_PANEL}">{body}</pre>')

    def __str__(self) -> str:
        return self.source

    def __repr__(self) -> str:
        return self.source


def show_code(source: str, language: str = "python") -> CodeView:
    """``source`` as a lesson shows code: highlighted, each line whole."""
    return CodeView(source, language)


def show_diff(before: str, after: str, fromfile: str = "before", tofile: str = "after",
              n: int = 2) -> CodeView:
    """What changes from ``before`` to ``after`` (two sources), as a readable unified diff."""
    return CodeView(unified_diff(before.splitlines(), after.splitlines(), fromfile, tofile, n),
                    "diff")
