"""The nbgrader plumbing: build the release, set up a course directory, the preprocessors that
grade without running student code in a kernel, the batch pool, and what a graded cell shows.

- the release: ``source_notebook`` (an authored exercise -> nbgrader source notebook), ``build``
  (``exercises/`` kept equal to nbgrader's own release);
- the course directory: ``course`` (``nbgrader_config.py``, the gradebook, nbgrader's API),
  ``settings`` (exchange, feedback, JupyterLab);
- grading inside nbgrader: ``preprocessors``, ``cells`` (what a graded cell shows),
  ``feedback``, ``validation`` (Validate's wording);
- grading a folder of submissions: ``submissions``, ``grading_pool``, ``grading_worker``,
  ``gradebook``, ``score_report`` (``batch`` imports them all from one place).
"""
