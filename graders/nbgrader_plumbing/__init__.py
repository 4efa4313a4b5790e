"""The nbgrader plumbing: build the release, set up a course directory, the preprocessors that
grade without running student code in a kernel, the batch pool, and what a graded cell shows.
"""
