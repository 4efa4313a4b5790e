"""The exercise registry: an explicit list, loaded all or nothing."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from graders.checks import EXERCISES
from graders.checks.base import EXERCISE_MODULES


def test_the_registry_holds_exactly_the_listed_exercises():
    modules = {sys.modules[name] for name in EXERCISE_MODULES}
    assert len(modules) == 4
    notebooks = [e.notebook for e in EXERCISES.values()]
    assert notebooks == sorted(notebooks)
    assert {m.EXERCISE.notebook for m in modules} == set(EXERCISES)


def test_an_exercise_module_that_fails_to_import_leaves_no_partial_registry():
    # One exercise's module raises on import (as a typo would): every import of the registry
    # fails with the module named, and no later import serves the exercises registered so far.
    program = textwrap.dedent("""
        import importlib.abc, sys

        class Broken(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path, target=None):
                if name == "graders.checks.power_cut":
                    raise SyntaxError("a typo in the exercise's module")
                return None

        sys.meta_path.insert(0, Broken())
        for attempt in (1, 2):
            try:
                import graders.checks
            except ImportError as error:
                print(attempt, type(error).__name__, error)
            else:
                print(attempt, "imported", list(graders.checks.EXERCISES))
        base = sys.modules["graders.checks.base"]
        print("left", dict(base.EXERCISES), dict(base.CHECKS))
    """)
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                         timeout=60, check=True).stdout.splitlines()
    assert out[0].startswith("1 RegistryError the exercise module graders.checks.power_cut"), out
    assert out[1].startswith("2 RegistryError the exercise module graders.checks.power_cut"), out
    assert out[2] == "left {} {}", out


def test_dev_check_names_files_that_no_exercise_record_names(tmp_path):
    from graders.cli.dev import ROOT, unexpected_files

    assert unexpected_files(ROOT, list(EXERCISES)) == []
    for folder in ("exercises/src", "solutions", "graders/data/hints", "tests/fixtures/06_old"):
        (tmp_path / folder).mkdir(parents=True)
    (tmp_path / "exercises/src/02_two_latent_failures.py").write_text("")
    (tmp_path / "exercises/src/02_two_latent_failures_old.py").write_text("")
    (tmp_path / "solutions/05_toy.py").write_text("")
    (tmp_path / "solutions/README.md").write_text("")
    (tmp_path / "graders/data/hints/2_two_latent_failures.md").write_text("")
    assert unexpected_files(tmp_path, list(EXERCISES)) == [
        "exercises/src/02_two_latent_failures_old.py", "solutions/05_toy.py",
        "graders/data/hints/2_two_latent_failures.md", "tests/fixtures/06_old"]
