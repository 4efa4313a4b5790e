"""The course is written in its own words: no run of 8 words shared with the source lesson.

The source lesson (`../shared/source/lesson2-checkpoints.txt`, JavaScript) is what the course is
built from, not part of it; this test reads it from beside the checkout and skips, saying so,
where it is absent. Quoted or not, a shared run counts: the course paraphrases and cites (issue
30). Strings that hold code (the saves and loops the course runs) are not prose.
"""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

import pytest

from tests.conftest import ROOT

#: Beside the checkout, or beside the folder that holds it (a git worktree under ``wt/``).
SOURCE = next((p / "shared" / "source" / "lesson2-checkpoints.txt" for p in ROOT.parents
               if (p / "shared" / "source" / "lesson2-checkpoints.txt").is_file()),
              ROOT.parent / "shared" / "source" / "lesson2-checkpoints.txt")
#: The shortest run of words, shared with the source, that counts as copying.
RUN = 8

#: Every file a student reads: lessons, exercises, solutions, hints, quiz and prediction text.
TEXTS = sorted([
    *ROOT.glob("lessons/*.py"),
    *ROOT.glob("exercises/src/*.py"),
    *ROOT.glob("solutions/*"),
    *ROOT.glob("graders/data/hints/*.md"),
    *ROOT.glob("graders/teaching/quiz_questions/*.py"),
    ROOT / "graders" / "teaching" / "predictions.py",
    # What a student reads from the grader too: check and resume messages, widget text.
    *(p for p in ROOT.glob("graders/**/*.py") if p.name not in ("predictions.py",)),
    *ROOT.glob("lessons/README.md"), *ROOT.glob("exercises/README.md"),
])


#: Names, not prose: the course's title, the scenario's task (data the fake model is scripted
#: with), and the titles of the cited references.
NAMES = [
    "State Management and Persistence: making long tasks survive interruption",
    "Lesson 2 of 6",
    "Sort last quarter's support tickets by issue type and roll them into one table",
    "How we built our multi-agent research system",
    "https://www.anthropic.com/engineering/multi-agent-research-system",
    "Building Effective AI Agents",
    "Checkpointing, Claude Code Docs",
    "https://code.claude.com/docs/en/checkpointing",
    "https://www.anthropic.com/engineering/building-effective-agents",
    "six fields: version, task, turns, tokensUsed, messages, pendingToolUse",
]
_STRING_QUOTES = re.compile(r"^[a-zA-Z]*('''|\"\"\"|'|\")|('''|\"\"\"|'|\")$")
_APOSTROPHES = str.maketrans({"’": "'", "‘": "'"})


def words(text: str) -> list[str]:
    """The words of ``text``, lower case, punctuation and markup dropped."""
    return re.findall(r"[a-z0-9]+(?:'[a-z]+)?", text.translate(_APOSTROPHES).lower())


def _drop_names(ws: list[str]) -> list[str]:
    out = list(ws)
    for name in NAMES:
        target = words(name)
        i = 0
        while i <= len(out) - len(target):
            if out[i:i + len(target)] == target:
                out[i:i + len(target)] = ["|"]
            i += 1
    return out


def runs(text: str, n: int = RUN) -> dict[tuple[str, ...], int]:
    """Every run of ``n`` consecutive words of ``text``, with the index of its first word."""
    found: dict[tuple[str, ...], int] = {}
    ws = words(text)
    for i in range(len(ws) - n + 1):
        found.setdefault(tuple(ws[i:i + n]), i)
    return found


def _is_code(string: str) -> bool:
    """Whether a string literal holds Python code (a save or a loop the course runs), not prose."""
    import ast
    import textwrap

    if "\n" not in string:
        return False
    try:
        tree = ast.parse(textwrap.dedent(string))
    except SyntaxError:
        return False
    return any(not isinstance(node, ast.Expr) for node in tree.body)


def prose(path: Path) -> str:
    """What a reader reads in ``path``: a Markdown file but its code blocks; of Python (a lesson
    or exercise in jupytext's percent format, a solution, the quiz texts), its comments and
    strings, so that code the course's contracts make follow the source's loop is not counted as
    prose."""
    text = path.read_text(encoding="utf-8")
    if path.suffix != ".py":
        return re.sub(r"^```.*?^```", "", text, flags=re.M | re.S)  # code blocks are code
    parts: list[str] = []
    previous = None
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type == tokenize.COMMENT:
            line = token.string.lstrip("#").strip()
            parts.append(line if line and not line.startswith("%%") else "\n")
        elif token.type == tokenize.STRING and " " in token.string:  # prose, not a dict key
            inner = _STRING_QUOTES.sub("", token.string)
            if _is_code(inner):
                continue
            if previous != tokenize.STRING:
                parts.append("\n")
            parts.append(inner)
        if token.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT):
            previous = token.type
    return re.sub(r"\n(\s*\n)+", "\n\n", "\n".join(parts))


def shared_runs(text: str, source: str, n: int = RUN) -> list[str]:
    """The runs of ``n`` words ``text`` shares with ``source``, merged into maximal passages."""
    ours = _drop_names(words(text))
    theirs = set(runs(source, n))
    hits = [i for i in range(len(ours) - n + 1) if tuple(ours[i:i + n]) in theirs]
    passages: list[tuple[int, int]] = []
    for i in hits:
        if passages and i <= passages[-1][1]:
            passages[-1] = (passages[-1][0], i + n)
        else:
            passages.append((i, i + n))
    return [" ".join(ours[a:b]) for a, b in passages]


def test_the_measure_finds_a_copied_sentence_quoted_or_not():
    # Issue 30: a run of eight words is copying even in quotation marks with a citation; the
    # course paraphrases and cites.
    source = "By default that scene exists only in the process's memory, and it dies with it."
    copied = "Here, by default that scene exists only in the process’s memory, as said."
    assert shared_runs(copied, source) == [
        "by default that scene exists only in the process's memory"]
    assert shared_runs("By default the scene is held in memory alone.", source) == []
    cited = ('As the docs put it, "by default that scene exists only in the process\'s memory"'
             " ([Docs](https://example.com)).")
    assert shared_runs(cited, source) != []


def test_code_in_a_string_is_not_prose(tmp_path):
    module = tmp_path / "m.py"
    module.write_text('SAVE = """\nimport json\n\ndef save(state):\n    json.dump(state)\n"""\n'
                      'NOTE = "a sentence a student reads"\n')
    assert "a sentence a student reads" in prose(module) and "json.dump" not in prose(module)


@pytest.mark.parametrize("path", TEXTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_run_of_eight_words_is_taken_from_the_source_lesson(path):
    if not SOURCE.is_file():
        pytest.skip(f"the source lesson is not at {SOURCE} (it is not part of the project): "
                    "nothing to compare with")
    if not path.is_file():
        pytest.skip(f"{path.relative_to(ROOT)} does not exist")
    shared = shared_runs(prose(path), SOURCE.read_text(encoding="utf-8"))
    assert not shared, (
        f"{path.relative_to(ROOT)} shares {len(shared)} passage(s) of {RUN}+ words with the "
        "source lesson; say it in the course's own words, and cite the "
        "source:\n  " + "\n  ".join(shared))
