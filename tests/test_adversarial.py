"""The adversarial catalogs: what they hold, and every exercise's fixtures graded as named.

``tests/fixtures/<exercise>/adversarial/`` holds, for each exercise, submissions written to get a
grade they do not deserve (``cheat_*``), plausible wrong fixes (``fails_*``) and unusual correct
fixes (``passes_*``); each file's docstring says what it does and why it must get what its
``expected.json`` says, check by check (``tests/fixtures/catalog.py``).

They are graded here by ``checkpoint-lab dev check`` (which also checks each exercise's release,
reference, starter and fixtures both ways; CI runs it through this test), and once more through
nbgrader in one batch by ``tests/test_adversarial_batch.py``. Some cheats attack the machine that
grades them (``os.kill(-1, SIGKILL)``, a fork bomb, killing the grader's process group). A grader
without a sandbox would let them reach every process of the user running the tests, so dev check
runs as process 1 of a PID namespace of its own (``unshare``): whatever the grader lets through
can reach nothing outside it, and every process left behind dies with it. The grader still has to
contain each submission itself: a grading process killed by its submission, or a wrong verdict,
fails the test. Entries whose truth waits for another helper's work (``catalog.PENDING``) must
be the only ones graded wrong, and each of them must still be.
"""
from __future__ import annotations

import pytest

from graders.cli.dev import name_problem
from tests.conftest import require_tools
from tests.fixtures import catalog

pytestmark = pytest.mark.sandbox

#: How many entries the catalogs held before issue 16's round (all in Level 2's).
BEFORE_ISSUE_16 = 66

@pytest.fixture(scope="module", autouse=True)
def _tools():
    require_tools()


@pytest.mark.parametrize("level", catalog.LEVELS)
def test_the_catalog_is_complete(level):
    folder, expected, judged = catalog.CATALOGS[level], catalog.EXPECTED[level], \
        catalog.JUDGED[level]
    files = sorted(p.stem for p in folder.glob("*.py"))
    assert files == sorted(expected), "every catalog file needs an entry in expected.json"
    groups = catalog.NAMED_GROUPS[level]
    prefixes = ("passes_", "fails_all_", "cheat_", *groups)
    if not groups:  # one judged check: a fails_ name says it all
        prefixes += ("fails_",)
    for name, row in expected.items():
        assert name.startswith(prefixes), f"{level}/{name}: named by outcome ({prefixes})"
        assert set(row) == set(judged), name
        text = (folder / f"{name}.py").read_text()
        assert text.startswith('"""'), f"{name} starts with a docstring saying what it does"
        assert "Expected" in text.split('"""')[1], f"{name}'s docstring says what it expects"
        if name.startswith(("cheat_", "fails_all_")):
            assert not any(row.values()), f"{name}: a cheat on the starter gains nothing"
        elif name.startswith("passes_"):
            assert all(row.values()), name
        elif not groups:
            assert not any(row.values()), name
        else:
            prefix = next(g for g in groups if name.startswith(g))
            assert row == {c: groups[prefix] not in c for c in judged}, name
        assert name_problem(name, row) is None, name  # dev check reads names alike
    for (pending_level, name), helper in {**catalog.PENDING,
                                          **catalog.PENDING_IN_NOTEBOOKS}.items():
        assert name in catalog.EXPECTED[pending_level] and helper


def test_the_catalogs_grew_by_forty_entries_over_every_exercise():
    counts = {level: len(catalog.EXPECTED[level]) for level in catalog.LEVELS}
    assert sum(counts.values()) >= BEFORE_ISSUE_16 + 40, counts
    assert all(count >= 5 for count in counts.values()), counts


def test_every_directive_is_known_and_applies(tmp_path):
    known = {"split-cell", "student-id", "symlink-to", "odd-grade-id", "empty-cells",
             "written-answer"}
    seen = set()
    for level, name in catalog.entries():
        found = catalog.directives(level, name)
        assert set(found) <= known, (level, name, found)
        seen |= set(found)
        if "split-cell" in found:
            text = (catalog.CATALOGS[level] / f"{name}.py").read_text()
            assert text.count(catalog.SPLIT_HERE + "\n") == 1, name
    assert seen == known
    ids = [catalog.student_id(level, name) for level, name in catalog.entries()]
    assert len(set(ids)) == len(ids), "one student per entry"


def _mismatched(output: str) -> dict[str, set[str]]:
    """exercise -> the fixtures dev check said were not graded as named."""
    found: dict[str, set[str]] = {}
    current = None
    for line in output.splitlines():
        if not line.startswith("  "):
            current = line.split(":")[0]
            found.setdefault(current, set())
        elif line.startswith("  - ") and ".py: " in line:
            found[current].add(line[4:].split(".py: ")[0])
    return found


@pytest.mark.timeout(1500)
def test_dev_check_grades_every_exercise_and_every_fixture_as_named(dev_check):
    # dev_check (tests/graded.py) runs once per session, contained: its records serve the tests
    # that need a fixture graded in the bubblewrap tier
    said = dev_check.said
    assert dev_check.tier and "bubblewrap tier" in dev_check.tier, said
    lines = [line for line in dev_check.stdout.splitlines() if not line.startswith("  ")]
    assert [line.split(":")[0] for line in lines] == list(catalog.LEVELS), said
    problems = [line for line in dev_check.stdout.splitlines() if line.startswith("  - ")
                and ".py: " not in line]
    assert not problems, said  # release, reference and starter: no pending work excuses these
    mismatched = _mismatched(dev_check.stdout)
    for level, line in zip(catalog.LEVELS, lines, strict=True):
        assert "(release in sync;" in line, said
        pending = {name for (lv, name) in catalog.PENDING if lv == level}
        assert mismatched[level] == pending, (
            f"{level}: graded wrong {sorted(mismatched[level] - pending)}; pending but now "
            f"graded right (remove from catalog.PENDING) {sorted(pending - mismatched[level])}"
            f"\n{said}")
        count = len(catalog.EXPECTED[level]) + len(list(catalog.CATALOGS[level].parent.glob(
            "*.py")))
        assert f" {count - len(pending)}/{count} fixtures as named" in line, line
        assert len(dev_check.records["exercises"][level]["fixtures"]) == count, level
    assert dev_check.returncode == (1 if catalog.PENDING else 0), said
