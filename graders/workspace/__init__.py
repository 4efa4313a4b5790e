"""The student's workspace: their own copies of the notebooks, their files, solutions on request.

``before_save`` is JupyterLab's pre-save hook; `graders.workspace.jupyter_extension`, the server
extension the environment enables (``graders/data/jupyter/env/``), registers it.
"""

from graders.workspace.notebooks import before_save

__all__ = ["before_save"]
