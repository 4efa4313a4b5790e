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
- `graders.teaching.scene`: small helpers to describe one crash run.
- `graders.teaching.cost`: what two saves per turn cost, measured, plotted and read.
- `graders.teaching.deeper`: the Going deeper demonstrations (two writers, power loss).
- `graders.teaching.filesystem`, `power_cut`, `predict`, `predictions`, `parallel_turn`: which
  filesystem a folder is on, the power-cut table, predict-then-run, and Level 4's turn.

Submodules are imported on demand, so importing this package pulls in neither ipywidgets nor
matplotlib.
"""

__all__ = ["variants", "timeline", "widgets", "quiz", "quizzes", "quiz_questions", "quiz_order",
           "checkpoint_view", "code_view", "style", "scene", "cost", "deeper", "filesystem",
           "power_cut", "predict", "predictions", "parallel_turn"]
