"""What the crash harness raises about itself: never about anything a submission does."""

__all__ = ["HarnessError", "RunnerDied"]


class HarnessError(Exception):
    """The harness itself could not do what was asked (an unknown scenario or crash point, a
    runner that could not start). Never raised for anything a submission does."""


class RunnerDied(HarnessError):
    """The runner ended (or stopped answering) in the middle of the crash runs."""

