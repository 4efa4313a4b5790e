"""The lesson's loop as the grader knows it: the protocol's names and the reference resume.

What a checkpoint means to the code that reads it. The checks run this code (their own copy,
never a file of the repository), the lessons show it, and the judge holds saves to it.
"""
