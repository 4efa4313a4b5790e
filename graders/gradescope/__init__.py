"""Gradescope: the autograder zip, what a submission holds (``submission_files``), and
``results.json`` for one submission graded as ``checkpoint-lab grade`` grades (``python -m
graders.gradescope`` inside the container).
"""
