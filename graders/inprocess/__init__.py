"""The in-process observers: the student's code runs in this process's reach, unboxed.

Two of them. The *in-process recorder* (:func:`~graders.inprocess.record.record_in_process`,
:class:`~graders.inprocess.recorded_harness.RecordedHarness`) runs a submission once inside this
process and records its file operations as the OS calls they are, for the same judge that grades
(pure Python: macOS, Windows, a browser). The *forking harness*
(:class:`~graders.inprocess.harness.Harness`) runs it in forked children and kills each at its
crash point, for real: the lessons' real crashes and the differential test of the replay. Both
serve the lessons, ``checkpoint-lab crash`` and the self-check where there is no sandbox
(:mod:`graders.sandbox.engine` chooses); neither ever decides a grade.

The recorder: ``record`` (one run: the grader's side and the submission's), ``patching`` (what
is replaced for the run), ``recorded_os``, ``recorded_names``, ``recorded_io`` (the recorded
calls), ``run_state``, ``scratch`` (the run's ``/work`` and ``/tmp``), ``oplog`` (the log, in
``parse_trace``'s shapes), ``recorded_harness``. The forking harness's deciding side:
``harness``, ``runner_backend`` or ``fork_backend``, ``collect``, ``load_messages``,
``arguments``, ``posix_support`` and ``errors``; the side submission code runs in: ``runner``,
``child``, ``recorder`` (a child's counters, kill points and torn writes), ``waiting`` and
``files``.
"""
