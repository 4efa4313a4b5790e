"""The in-process observers: the student's code runs in this process's reach, unboxed; they
record, and never judge.

Two of them. The *in-process recorder* (:func:`~graders.inprocess.record.record_in_process`)
runs a submission once inside this process and records its file operations as the OS calls they
are, a :class:`~graders.judge.recording.Recording` for the same judge that grades (pure Python:
macOS, Windows, a browser). The *forking observer*
(:class:`~graders.inprocess.forking.ForkedRuns`) runs it in forked children and kills each
where its plan says, for real: an :class:`~graders.judge.recording.Observation` per child, for
the lessons' real crashes and the differential test of the replay. The grading layer
(:mod:`graders.grading`) chooses them, plans the crash points and judges what they saw.

The recorder: ``record`` (one run: the grader's side and the submission's), ``patching`` (what
is replaced for the run), ``recorded_os``, ``recorded_names``, ``recorded_io`` (the recorded
calls), ``run_state``, ``scratch`` (the run's ``/work`` and ``/tmp``), ``oplog`` (the log, in
``parse_trace``'s shapes). The forking observer: ``forking``, ``runner_backend`` or
``fork_backend``, ``collect``; the side submission code runs in: ``runner``, ``child``,
``recorder`` (a child's counters, kill points and torn writes), ``waiting``; what both sides
share: ``support``.
"""
