"""Kept for course directories built earlier, whose ``nbgrader_config.py`` names
``graders.feedback.FeedbackNotes``: the names of :mod:`graders.nbgrader_plumbing.feedback`."""

from graders.nbgrader_plumbing.feedback import *  # noqa: F403
from graders.nbgrader_plumbing.feedback import __all__  # noqa: F401
