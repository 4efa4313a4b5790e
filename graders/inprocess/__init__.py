"""The in-process observer: runs a submission in forked children of a runner and kills each at
its crash point, from inside the submission's own process (no OS boundary).

It serves the lessons, ``checkpoint-lab crash`` and the self-check where there is no sandbox
(macOS). It never decides a grade: :mod:`graders.sandbox` does that side when grading.
"""
