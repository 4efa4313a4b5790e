"""The in-process observer: runs a submission in forked children of a runner and kills each at
its crash point, from inside the submission's own process (no OS boundary).

It serves the lessons, ``checkpoint-lab crash`` and the self-check where there is no sandbox
(macOS). It never decides a grade: :mod:`graders.sandbox` does that side when grading.

The deciding side: ``harness`` (:class:`~graders.inprocess.harness.Harness` and the functions
lessons call), ``runner_backend`` (starting the runner and speaking its protocol) or
``fork_backend`` (in-process mode: this process forks), ``collect`` (reading what a child left),
``load_messages``, ``arguments``, ``posix_support`` and ``errors``. The side submission code
runs in: ``runner`` (loads the code once, forks a child per crash point), ``child`` (one
child's life), ``recorder`` (its counters, records, kill points and torn writes), ``waiting``
(reaping and killing children) and ``files`` (the names of the files a child leaves).
"""
