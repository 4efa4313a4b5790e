"""The whole adversarial catalog in ONE real nbgrader batch, and the harm it may not do.

A fresh course is built; the reference, the starter and every file of
``tests/fixtures/02_two_latent_failures/adversarial/`` hand in the Level 2 notebook as one
student each (the file's code
in the answer cells); ``checkpoint-lab grade`` grades them all at once. Then:

- every student's scores in the gradebook are what ``expected.json`` says (the reference full
  marks, the starter 0 autograded points);
- no process the batch started is left alive;
- nothing was written outside scratch: the course directory (but for what nbgrader itself writes),
  the checkout's ``solutions/``, the submissions folder, and a decoy ``$HOME`` holding a decoy
  ``gradebook.db`` hash the same before and after; no file the catalog drops appeared in the
  machine's ``/tmp`` or ``/dev/shm``;
- the gradebook still holds the same scores 4 s after the batch ended (a daemon may wait);
- no connection reached a listener the test keeps open on 127.0.0.1:47613 for the whole batch.

Containment, so that a grader without a sandbox harms nothing but this test: the batch runs under
a shim that is process 1 of its own PID namespace (``unshare``). The shim starts the grade command
and, when it ends, stays up until the test has looked for leftover processes (every process in
the namespace, nested ones included, but the shim) and read the gradebook again; then it exits and
the kernel ends whatever is left.
"""

from __future__ import annotations

import pytest

from tests.conftest import (
    CHECK_IDS,
    LISTEN,
    POINTS,
    STUDENTS,
    grade_catalog_batch,
    require_tools,
    said_by,
)

pytestmark = [pytest.mark.nbgrader, pytest.mark.sandbox]

@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    """Build a course, hand in every student, grade them all in one contained batch."""
    require_tools()
    return grade_catalog_batch(tmp_path_factory.mktemp("adversarial-batch"))


@pytest.mark.timeout(1800)
def test_the_batch_ends_and_grades_everyone(batch):
    assert batch["status"] == 0, f"checkpoint-lab grade failed: {said_by(batch)}"
    missing = [s for s in batch["students"] if s not in batch["scores"]]
    assert not missing, f"not in the gradebook: {missing}\n{said_by(batch)}"


@pytest.mark.timeout(1800)
@pytest.mark.parametrize("student", sorted(STUDENTS))
def test_scores_match_expected(batch, student):
    scores = batch["scores"].get(student)
    assert scores is not None, f"{student} is not in the gradebook: {said_by(batch)}"
    want = {check: POINTS[check] if passed else 0 for check, passed in STUDENTS[student].items()}
    got = {check: scores.get(check) for check in CHECK_IDS}
    assert got == want, f"{student}: gradebook {got}, expected {want}"


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
    assert not changed, f"scores changed in the 4 s after the batch ended: {changed}"


@pytest.mark.timeout(1800)
def test_no_connection_reached_the_listener(batch):
    assert not batch["connections"], (
        f"connections to {LISTEN[0]}:{LISTEN[1]} during the batch: {batch['connections']}")
