"""What both observers share to record a run: the call server that answers a running
submission's model and tool calls (``calls``) and the framing of the channel it answers on
(``framing``). The sandbox and the in-process recorder each use it; neither owns it. It imports
nothing of the observers, the grading layer or the checks.
"""
