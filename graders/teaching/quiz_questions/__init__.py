"""The lesson's quiz questions, one module per part of the lesson, named after its notebook.

Each module holds ``QUESTIONS``, the `Quiz`es that part shows, options in the order they were
written; `graders.teaching.quizzes` gathers them by id and gives each student their own order.
Every wrong answer is a misconception someone really holds, and every answer says why it is
right or wrong.
"""

__all__ = ["SOURCE_LESSON", "BEYOND_SOURCE"]

#: The ``source`` of a question the source lesson asks itself.
SOURCE_LESSON = "the source lesson's own question"
#: The ``source`` of a question that goes beyond the source lesson.
BEYOND_SOURCE = "beyond the source lesson"
