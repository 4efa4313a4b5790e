"""The nbgrader plumbing: build the release, set up a course directory, the preprocessors that
grade without running student code in a kernel, the batch pool, and what a graded cell shows.

- the release: ``source_notebook`` (an authored exercise -> nbgrader source notebook), ``build``
  (``exercises/`` kept equal to nbgrader's own release);
- the course directory: ``course`` (``nbgrader_config.py``, the gradebook, nbgrader's API),
  ``settings`` (exchange, feedback, JupyterLab);
- grading inside nbgrader: ``preprocessors``, ``gradings`` (the gradings an autograde run
  starts, one pool per submission, closed when it is done), ``split_cells`` (cells that share a
  grade_id, joined), ``cells`` (what a graded cell shows, from the check's record),
  ``feedback``, ``safe_html`` (students' HTML made inert in the feedback and formgrader),
  ``validation`` (Validate's wording);
- grading a folder of submissions: ``submissions`` (regular files only, capped),
  ``grading_batch`` and ``copies`` (the hand-ins' copy, a shadow course), ``grading_pool``,
  ``grading_worker`` (a time limit per student), ``gradebook`` (the scores and the checks'
  records), ``score_report`` (the class summary, each student's table, the CSV; all from the
  records).
"""
