"""Kept for notebooks made earlier: the names of :mod:`graders.inprocess.harness`."""

from graders.inprocess.harness import *  # noqa: F403
from graders.inprocess.harness import __all__  # noqa: F401
