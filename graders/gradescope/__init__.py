"""Gradescope: the autograder zip, and ``results.json`` for one submission graded as
``checkpoint-lab grade`` grades (``python -m graders.gradescope`` inside the container).
"""
