"""The grading layer: choose an observer, record, judge; the one place that does all three.

The observers only record (:mod:`graders.sandbox`: strace over bubblewrap, or strace alone;
:mod:`graders.inprocess`: the in-process recorder, the forking harness's runs) and the judge only
judges (:mod:`graders.judge`); this package puts them together: :mod:`~graders.grading.observers`
chooses the observer this machine allows (and reads ``CHECKPOINT_LAB_SANDBOX``, one way),
:mod:`~graders.grading.recorded` records one run per scenario and hands it to the judge (making
again a recording the grader lost part of), :mod:`~graders.grading.recorded` makes the restarts
and the full-disk run beside it, and :mod:`~graders.grading.forked` kills the student's code at
each crash point for real (the lessons) and judges each observation.
"""
