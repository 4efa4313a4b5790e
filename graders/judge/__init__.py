"""The judge: turn a recorded run into crash states and verdicts. Pure: it runs no student code,
reads no files, and loads nothing of the observers (:mod:`graders.inprocess`,
:mod:`graders.sandbox`), the grading layer that drives them (:mod:`graders.grading`), the
exercises' checks, nbgrader or the network (a test follows every import to hold it to that).

From the recording to the crash states: ``recording`` (what a run left the grader), ``trace``
(strace's lines as operations), ``call_markers`` (which trace marker is which call the grader
numbered), ``budget`` (what judging one run may cost), ``disk_model``, ``processes``,
``path_walk``, ``file_operations`` and ``replay_model`` (a model of the sandbox's files,
descriptors and processes as the kernel keeps them, and what each operation does to it),
``binding`` (which operations matter to checkpoint.json), ``moments`` and ``replay`` (every state
a kill leaves, and the words for each moment), ``power_model`` and ``power`` (every state a power
cut leaves, and its verdicts), ``matrix`` (moments grouped into crash points), ``run_problems``
(what is wrong with a run as a whole), ``restarts`` and ``full_disk`` (the runs beside the
recorded one: a restart after a kill, a disk that fills).

From a crash state to a verdict: ``observation`` (what the judge reads), ``crash_points``,
``check_state`` and ``crash_check`` (what every check holds and the rules they share),
``checkpoint_rules`` (one tool call per turn) and ``parallel_check``/``parallel_rules`` (several
calls in one turn), with their problem codes, ``verdict`` and ``verdicts`` (one per crash point).
"""

from graders.judge.recording import Call, Reading, Recording

__all__ = ["Recording", "Call", "Reading"]
