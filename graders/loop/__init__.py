"""The lesson's loop as the grader knows it: the protocol's names and the reference resume.

What a checkpoint means to the code that reads it. The checks run this code (their own copy,
never a file of the repository), the lessons show it, and the judge holds saves to it.

- `graders.loop.protocol`: the six fields and the checkpoint's file name.
- `graders.loop.lesson_loop`: the lesson's ``run_agent`` and atomic ``save_checkpoint``.
- `graders.loop.resume`: the reference resume, in steps: `resume_reading` (read and parse),
  `resume_fields` (the version and one check per field), `resume_run` (run on),
  `resume_report` (what it found), `conversation` (tool calls and results in ``messages``).
- `graders.loop.restart`: what a restarted process runs after a kill: resume as a loop that
  saves, through the submission's ``save_checkpoint``.
"""
