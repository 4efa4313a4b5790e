"""The student's workspace: their own copies of the notebooks, their files, solutions on request.

``before_save`` is JupyterLab's pre-save hook (named in ``graders/data/jupyter/``).
"""

from graders.workspace.notebooks import before_save

__all__ = ["before_save"]
