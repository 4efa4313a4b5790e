"""Kept for notebooks made earlier: the names of :mod:`graders.checks.hints`."""

from graders.checks.hints import *  # noqa: F403
from graders.checks.hints import __all__  # noqa: F401
