"""What only nbgrader can show of the adversarial catalogs, in ONE real batch, and the harm it may
not do.

``checkpoint-lab dev check`` (``tests/test_adversarial.py``) already grades every entry of every
catalog (``tests/fixtures/<exercise>/adversarial/``, ``tests/fixtures/catalog.py``) and proves each
one's per-check score: the same answer-cell code through the same ``grade_submission``, many at
once. What it cannot show is what happens around the verdict when ``checkpoint-lab grade`` runs
nbgrader on a class: the notebook, the gradebook, the grade command's pool of workers, its
outputs, and the machine seen from outside. So a fresh course is built and one student each
hands in (:data:`BATCH`): the reference and the starter; every entry whose harm lands outside
its verdict (:data:`HARMS`); every entry with ``# notebook:`` directives (a split answer cell,
an odd student id, a symbolic link, odd metadata, 40,000 cells, HTML in the written answer);
and, per exercise, one entry that passes and one that fails each part, so that per-check
points are seen to land in the gradebook. ``checkpoint-lab grade`` grades them all at once.
Then:

- every student's scores in the gradebook are what ``expected.json`` says (the reference full
  marks, the starter 0 autograded points);
- no process the batch started is left alive;
- nothing was written outside scratch: the course directory (but for what nbgrader itself writes),
  the checkout's ``solutions/``, the submissions folder, and a decoy ``$HOME`` holding a decoy
  ``gradebook.db`` hash the same before and after; no file the catalog drops appeared in the
  machine's ``/tmp`` or ``/dev/shm``;
- the gradebook still holds the same scores 4 s after the batch ended (a daemon may wait);
- no connection reached a listener the test keeps open on 127.0.0.1:47613 for the whole batch;
- no terminal escape sequence and no spreadsheet formula from a student reaches the grade
  command's output or the CSV; the feedback of the student whose written answer is HTML holds
  none of it live.

The whole catalog goes through one batch in ``tests/test_grading_tiers.py``, in the uid tier,
where no ``dev check`` has graded it.

Containment, so that a grader without a sandbox harms nothing but this test: the batch runs under
a shim that is process 1 of its own PID namespace (``unshare``). The shim starts the grade command
and, when it ends, stays up until the test has looked for processes left behind (every process in
the namespace, nested ones included, but the shim) and read the gradebook again; then it exits and
the kernel ends whatever is left.
"""

from __future__ import annotations

import csv
import io
from html.parser import HTMLParser

import pytest

from tests.conftest import (
    CHECK_IDS,
    LINKED,
    LISTEN,
    ODD_METADATA,
    POINTS,
    STUDENTS,
    grade_catalog_batch,
    require_tools,
)
from tests.fixtures import catalog

pytestmark = [pytest.mark.nbgrader, pytest.mark.sandbox]

#: Students this branch alone grades wrong in the batch, and the helper each waits for.
PENDING = {catalog.student_id(level, name): helper for (level, name), helper in
           {**catalog.PENDING, **catalog.PENDING_IN_NOTEBOOKS}.items()}

#: Catalog entries whose harm lands outside their verdict, by what the batch sees of it.
HARMS: dict[str, tuple[str, ...]] = {
    "processes left alive, or the pool's workers killed": (
        "cheat_kill_everything", "cheat_kill_parent", "cheat_kill_process_group",
        "cheat_fork_bomb", "cheat_sleep_forever_thread", "cheat_gradebook_daemon"),
    "the gradebook rewritten, now or after the batch": (
        "cheat_gradebook_write", "cheat_gradebook_daemon"),
    "files written outside scratch ($HOME, /tmp, /dev/shm, the course directory)": (
        "cheat_count_runs_home", "cheat_count_runs_tmp", "cheat_env_secrets", "cheat_fill_disk",
        "cheat_drops_into_dev_shm", "cheat_forge_harness_files"),
    "a connection to the grading machine": ("cheat_network_loopback", "cheat_env_secrets"),
    "the course's source and other students' hand-ins, there only in a course directory": (
        "cheat_reads_course_source", "cheat_reads_other_students"),
    "the instructor's terminal, CSV and feedback": (
        "cheat_terminal_escapes_in_exception", "cheat_csv_formula_student_id",
        "cheat_script_in_written_answer"),
}


def _batch() -> dict[str, tuple[str, str | None, dict[str, bool]]]:
    """The students of the batch: the reference, the starter, :data:`HARMS` (Level 2's catalog),
    every entry with directives, and per exercise the first entry (by name) that passes and the
    first that fails each part (``fails_`` alone where an exercise judges one check)."""
    chosen = {"reference", "starter"}
    chosen |= {catalog.student_id(catalog.LEVELS[1], name)
               for names in HARMS.values() for name in names}
    for level in catalog.LEVELS:
        names = sorted(catalog.EXPECTED[level])
        chosen |= {catalog.student_id(level, n) for n in names if catalog.directives(level, n)}
        for prefix in ("passes_", *(catalog.NAMED_GROUPS[level] or ("fails_",))):
            first = next(n for n in names if n.startswith(prefix))
            chosen.add(catalog.student_id(level, first))
    return {student: STUDENTS[student] for student in sorted(chosen)}


BATCH = _batch()


class _LiveHtml(HTMLParser):
    """The live pieces of a page that the written-answer cheat planted: a script element that
    says "pwned", an ``on*`` handler attribute, a ``javascript:`` link (escaped text is not)."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag, attrs):
        self._in_script = tag == "script"
        for name, value in attrs:
            if name.startswith("on") and "pwned" in (value or ""):
                self.found.append(f"<{tag} {name}=...>")
            if name in ("href", "src") and (value or "").strip().lower().startswith(
                    "javascript:"):
                self.found.append(f"<{tag} {name}=javascript:...>")

    def handle_data(self, data):
        if self._in_script and "pwned" in data:
            self.found.append("<script>...pwned...</script>")

    def handle_endtag(self, tag):
        self._in_script = False


def _live_html(page: str) -> list[str]:
    parser = _LiveHtml()
    parser.feed(page)
    return parser.found


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    """Build a course, hand in every student, grade them all in one contained batch."""
    require_tools()
    return grade_catalog_batch(tmp_path_factory.mktemp("adversarial-batch"), students=BATCH)


def _said(batch) -> str:
    return f"status {batch['status']}\n{batch['stdout']}\n{batch['stderr']}"


@pytest.mark.timeout(1800)
def test_the_batch_ends_and_grades_everyone(batch):
    assert batch["status"] is not None, f"checkpoint-lab grade did not end: {_said(batch)}"
    failed = batch["autograde_failed"]
    # nbgrader may refuse a notebook whose metadata is odd (that student's failure, said so),
    # and refuses a split answer cell until the grader joins them (a pending entry).
    allowed = {catalog.student_id(level, name) for level, name in catalog.PENDING_IN_NOTEBOOKS
               } | ODD_METADATA
    assert failed <= allowed, f"nbgrader failed {sorted(failed - allowed)}: {_said(batch)}"
    assert batch["status"] == (1 if failed else 0), _said(batch)
    missing = [s for s in batch["students"] if s not in batch["scores"] and s not in LINKED]
    assert not missing, f"not in the gradebook: {missing}\n{_said(batch)}"


@pytest.mark.timeout(1800)
@pytest.mark.parametrize("student", [
    pytest.param(s, marks=pytest.mark.xfail(strict=True, reason=f"waits for {PENDING[s]}"))
    if s in PENDING else s for s in BATCH])
def test_scores_match_expected(batch, student):
    scores = batch["scores"].get(student)
    if scores is None and student in LINKED:
        scores = {}  # a link refused: nothing of this student's was graded, so no points
    assert scores is not None, f"{student} is not in the gradebook: {_said(batch)}"
    level, _, expected = BATCH[student]
    want = {check: POINTS[check] if passed else 0 for check, passed in expected.items()}
    got = {check: scores.get(check, 0 if student in LINKED else None) for check in expected}
    assert got == want, f"{student} ({level}): gradebook {got}, expected {want}"


@pytest.mark.timeout(1800)
def test_the_reference_gets_full_marks_and_the_starter_none(batch):
    assert all(batch["scores"]["reference"].get(c) == POINTS[c] for c in CHECK_IDS)
    assert sum(batch["scores"]["starter"].get(c) or 0 for c in CHECK_IDS) == 0


@pytest.mark.timeout(1800)
def test_no_process_left_alive(batch):
    assert not batch["left_alive"], (
        "processes the batch started were still alive after it ended:\n"
        + "\n".join(batch["left_alive"][:40]))
    assert not batch["outside"], ("processes mentioning the batch's folders outlived it:\n"
                                  + "\n".join(batch["outside"][:40]))


@pytest.mark.timeout(1800)
def test_nothing_written_outside_scratch(batch):
    written = {label: paths for label, paths in batch["written"].items() if paths}
    assert not written, f"changed by the batch: {written}"
    assert not batch["droppings"], f"new files in /tmp or /dev/shm: {batch['droppings']}"


@pytest.mark.timeout(1800)
def test_gradebook_unchanged_after_the_batch(batch):
    changed = {s: (batch["scores"].get(s), batch["scores_later"].get(s))
               for s in set(batch["scores"]) | set(batch["scores_later"])
               if batch["scores"].get(s) != batch["scores_later"].get(s)}
    assert not changed, f"scores changed after the batch ended: {changed}"


@pytest.mark.timeout(1800)
def test_no_connection_reached_the_listener(batch):
    assert not batch["connections"], (
        f"connections to {LISTEN[0]}:{LISTEN[1]} during the batch: {batch['connections']}")


@pytest.mark.timeout(1800)
def test_no_terminal_escape_from_a_student_reaches_the_output_or_the_csv(batch):
    assert not batch["escapes"], batch["escapes"]


@pytest.mark.timeout(1800)
def test_no_csv_cell_starts_as_a_spreadsheet_formula(batch):
    cells = [cell for row in csv.reader(io.StringIO(batch["csv"])) for cell in row]
    assert cells, "no CSV written"
    formulas = [cell for cell in cells if cell[:1] in ("=", "+", "-", "@")]
    assert not formulas, formulas


@pytest.mark.timeout(1800)
def test_html_in_a_written_answer_is_not_live_in_the_feedback(batch):
    assert batch["feedback"], "no student handed in HTML"
    for student, html in batch["feedback"].items():
        assert not html.startswith("(no feedback"), f"{student}: {html}"
        live = _live_html(html)
        assert not live, f"{student}'s feedback keeps {live} live"
