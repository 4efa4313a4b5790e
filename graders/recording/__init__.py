"""What both observers share to record a run: the call server that answers a running
submission's model and tool calls (``calls``), the framing of the channel it answers on
(``framing``), the readings of ``checkpoint.json`` and its folder from outside
(``readings``), the run folders each run holds while it lives, which a killed grader's next
start sweeps (``run_folders``), and the putting back of a crash's leftovers before a restart
(``leftovers``, standard library only: the sandbox's bootstrap runs it inside the sandbox). The
sandbox and the in-process recorder each use it; neither owns it. It imports nothing of the
observers, the grading layer or the checks.
"""
