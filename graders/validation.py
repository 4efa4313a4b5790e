"""Kept for student workspaces set up earlier, whose ``nbgrader_config.py`` runs
``graders.validation.install()``: the names of :mod:`graders.nbgrader_plumbing.validation`."""

from graders.nbgrader_plumbing.validation import *  # noqa: F403
from graders.nbgrader_plumbing.validation import __all__  # noqa: F401
