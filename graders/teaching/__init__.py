"""Lesson support for Lesson 2: the logic behind every widget and demonstration, tested.

- `graders.teaching.variants`: the four loops the crash timeline toggles between (real
  submissions, put together from the starter and the reference), and a loop with no checkpoint.
- `graders.teaching.timeline`: the crash timeline model, built by running the crash harness.
- `graders.teaching.widgets`: the ipywidgets views (timeline, quizzes), each with a text fallback.
- `graders.teaching.quiz`, `graders.teaching.quizzes`: quiz logic, and the lesson's questions
  (`graders.teaching.quiz_questions`, one module per lesson; `graders.teaching.quiz_order`
  shuffles the options per student).
- `graders.teaching.checkpoint_view`: a checkpoint shown readably, chosen fields highlighted.
- `graders.teaching.code_view`: code and diffs shown whole-line (no mid-word wrap), any theme.
- `graders.teaching.style`: the widgets' stylesheet (light and dark theme) and keyboard script.
- `graders.teaching.scene`: small helpers to describe one crash run, and to print it wrapped at
  word boundaries.
- `graders.teaching.cost`: what two durable saves per turn cost, measured, plotted and read.
- `graders.teaching.deeper`: two writers on one temp name (the appendix), a rename across
  filesystems (part 3).
- `graders.teaching.power_cut`: part 4's power-cut table, and Level 3's four saves to predict.
- `graders.teaching.predict`, `predictions`: predict-then-run (options shuffled per student, as
  the quizzes'), and the lock under Level 2's written part 1 (`lock_answer`).
- `graders.teaching.filesystem`, `parallel_turn`: which filesystem a folder is on, and one turn
  with several tool calls (part 5).

Every view's plain-text fallback shows a question and how to answer it, never its answer.

Submodules are imported on demand, so importing this package pulls in neither ipywidgets nor
matplotlib.
"""

__all__ = ["variants", "timeline", "widgets", "quiz", "quizzes", "quiz_questions", "quiz_order",
           "checkpoint_view", "code_view", "style", "scene", "cost", "deeper", "filesystem",
           "power_cut", "predict", "predictions", "parallel_turn"]
