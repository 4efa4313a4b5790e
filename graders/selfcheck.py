"""Kept for notebooks made earlier: the names of :mod:`graders.checks.selfcheck`."""

from graders.checks.selfcheck import *  # noqa: F403
from graders.checks.selfcheck import __all__  # noqa: F401
