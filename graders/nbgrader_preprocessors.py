"""Kept for notebooks made earlier: the names of :mod:`graders.nbgrader_plumbing.preprocessors`."""

from graders.nbgrader_plumbing.preprocessors import *  # noqa: F403
from graders.nbgrader_plumbing.preprocessors import __all__  # noqa: F401
