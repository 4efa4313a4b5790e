"""Shared pytest setup: where the project is, and whether we run in CI."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
IN_CI = os.environ.get("CI", "").lower() == "true"


@pytest.fixture(scope="session")
def repo_root() -> Path:
    """The project's top folder."""
    return ROOT
