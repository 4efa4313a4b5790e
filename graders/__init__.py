"""Checkpoint Lab graders: the crash harness, the checkpoint checker and nbgrader integration."""
