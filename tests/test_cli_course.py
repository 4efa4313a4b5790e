"""``checkpoint-lab course DIR``: a course directory where nbgrader's own commands just work."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from graders.cli import main
from graders.nbgrader_plumbing.course import load_config

ENV = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
BIN = Path(sys.executable).parent


def _run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([*args], cwd=cwd, env=ENV, capture_output=True, text=True, timeout=240)


def test_help_says_what_it_builds():
    proc = _run(sys.executable, "-m", "graders.cli", "course", "--help")
    assert proc.returncode == 0
    assert "DIR" in proc.stdout and "gradebook" in proc.stdout and "--students" in proc.stdout


@pytest.mark.nbgrader
def test_course_directory_works_with_nbgraders_own_commands(tmp_path):
    course = tmp_path / "course"
    proc = _run(sys.executable, "-m", "graders.cli", "course", str(course),
                "--students", "alice,bob")
    assert proc.returncode == 0, proc.stderr[-2000:]
    # it says where everything is, the exchange and the students it added included
    assert f"config     {course / 'nbgrader_config.py'}" in proc.stdout, proc.stdout
    assert f"exchange   {course / 'exchange'}/" in proc.stdout
    assert "students   alice, bob (in the gradebook)" in proc.stdout
    assert "jupyter lab --config=jupyter_lab_config.py" in proc.stdout
    for path in ("nbgrader_config.py", "gradebook.db", "exchange",
                 "source/lesson2/02_two_latent_failures.ipynb",
                 "release/lesson2/01_incomplete_checkpoint.ipynb"):
        assert (course / path).exists(), path
    config = load_config(course)
    assert "graders.nbgrader_plumbing.preprocessors.WriteVerdicts" in \
        config.Autograde.autograde_preprocessors
    again = _run(str(BIN / "nbgrader"), "generate_assignment", "lesson2", "--force", cwd=course)
    assert again.returncode == 0, again.stderr[-2000:]
    assert "Exception while loading config file" not in again.stdout + again.stderr
    students = _run(str(BIN / "nbgrader"), "db", "student", "list", cwd=course)
    assert "alice" in students.stdout and "bob" in students.stdout
    assert "Exception while loading config file" not in students.stdout + students.stderr


def test_a_file_in_place_of_the_folder_is_one_clear_line(tmp_path, capsys):
    target = tmp_path / "course"
    target.write_text("not a folder")
    assert main(["course", str(target)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "is a file" in err
    assert target.read_text() == "not a folder"


def test_a_folder_with_other_files_is_left_alone(tmp_path, capsys):
    (tmp_path / "notes.txt").write_text("keep me")
    assert main(["course", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "not a course directory" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]
