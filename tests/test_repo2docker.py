"""The student image repo2docker builds from this repository (Binder, Zero to JupyterHub).

``jupyter-repo2docker --no-build --debug`` prints the Dockerfile it would build without Docker;
the tests read it. ``postBuild`` runs for real in a throwaway environment (its own
``sys.prefix``, this environment's packages) to show which nbgrader extensions a student keeps.
The image's files are the build context repo2docker's own code makes from a checkout (its
``.dockerignore`` applied), handed to a stand-in for the Docker daemon: no mark scheme, no
solution, no test, no git history among them, and every lesson runs from them.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

from tests.conftest import IN_CI, ROOT

BIN = Path(sys.executable).parent
REPO2DOCKER = shutil.which("jupyter-repo2docker", path=str(BIN))


@pytest.fixture(scope="module")
def dockerfile() -> str:
    if REPO2DOCKER is None:
        message = "jupyter-repo2docker is missing: pip install -e '.[test]'"
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)
    # as docs/jupyterhub.md builds it: the repository outside the home folder, which a
    # persistent volume covers on Zero to JupyterHub
    done = subprocess.run([REPO2DOCKER, "--no-build", "--no-run", "--debug", "--user-id", "1000",
                           "--user-name", "jovyan", "--target-repo-dir", "/srv/checkpoint-lab",
                           str(ROOT)],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "FROM " in done.stdout, "repo2docker printed no Dockerfile"
    return done.stdout


def test_the_image_installs_the_course_from_the_whole_repository(dockerfile):
    copy = dockerfile.index("COPY --chown=1000:1000 src/ ${REPO_DIR}/")
    install = re.search(r'env update -p \$\{NB_PYTHON_PREFIX\} --file "environment\.yml"',
                        dockerfile)
    assert install, "the Dockerfile does not install environment.yml"
    # environment.yml's `.` and `-c constraints.txt` need the repository in place first
    assert copy < install.start()
    # --target-repo-dir reaches the build as this argument (docker build --build-arg)
    assert "ARG REPO_DIR=" in dockerfile and "WORKDIR ${REPO_DIR}" in dockerfile
    assert "--target-repo-dir /srv/checkpoint-lab" in (ROOT / "docs" / "jupyterhub.md").read_text()
    pip = (ROOT / "environment.yml").read_text()
    assert re.search(r"^\s+- -c constraints\.txt$", pip, re.M)
    assert re.search(r"^\s+- \.$", pip, re.M)  # a wheel: its Jupyter settings are installed
    assert "python=3.11" in pip


def test_the_image_has_the_sandbox_and_runs_post_build(dockerfile):
    apt = re.search(r"apt-get install --yes --no-install-recommends ([^&]+)&&", dockerfile)
    assert apt and set(apt.group(1).split()) == {"bubblewrap", "strace"}
    assert "RUN ./postBuild" in dockerfile
    assert dockerfile.index("RUN ./postBuild") > dockerfile.index('--file "environment.yml"')


def test_the_images_entry_point_runs_start_before_the_server(dockerfile):
    """On Binder and in a Zero to JupyterHub pod (KubeSpawner sets the container's ``args``,
    keeping the image's entry point), ``start`` runs before the server: the hub route of
    docs/jupyterhub.md releases the lessons through it (tests/test_hub_image_start.py)."""
    assert 'ENTRYPOINT ["/usr/local/bin/repo2docker-entrypoint"]' in dockerfile
    assert re.search(r'ENV R2D_ENTRYPOINT="?\$\{REPO_DIR\}/start"?', dockerfile), \
        re.findall(r".*R2D_ENTRYPOINT.*", dockerfile)


def _throwaway_env(folder: Path) -> dict[str, str]:
    """A venv whose ``jupyter`` commands use this environment's packages but its own prefix."""
    venv.EnvBuilder(with_pip=False).create(folder)
    site = sysconfig.get_paths()["purelib"]
    for command, module in (("jupyter", "jupyter_core.command"),
                            ("jupyter-labextension", "jupyterlab.labextensions"),
                            ("jupyter-server", "jupyter_server.serverapp")):
        script = folder / "bin" / command
        script.write_text(f"#!{folder}/bin/python\nimport sys\nsys.path.insert(0, {site!r})\n"
                          f"from {module} import main\nsys.exit(main())\n")
        script.chmod(0o755)
    # nbgrader's own server-extension settings, as its install leaves them
    config = folder / "etc" / "jupyter" / "jupyter_server_config.d"
    config.mkdir(parents=True)
    shutil.copy(Path(sys.prefix) / "etc" / "jupyter" / "jupyter_server_config.d" /
                "nbgrader.json", config)
    return {"PATH": f"{folder}/bin:/usr/bin:/bin", "HOME": str(folder), "LANG": "C.UTF-8",
            "JUPYTER_PLATFORM_DIRS": "1"}


@pytest.mark.install
def test_post_build_keeps_only_the_students_nbgrader_extensions(tmp_path):
    env = _throwaway_env(tmp_path / "env")
    done = subprocess.run(["bash", str(ROOT / "postBuild")], env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    page = json.loads((tmp_path / "env" / "etc" / "jupyter" / "labconfig" /
                       "page_config.json").read_text())
    instructor = {f"@jupyter/nbgrader:{p}" for p in ("formgrader", "course-list",
                                                       "create-assignment")}
    assert set(page["disabledExtensions"]) == instructor
    assert set(page["lockedExtensions"]) == instructor, "a student could re-enable them"
    listed = subprocess.run(["jupyter", "server", "extension", "list"], env=env,
                            capture_output=True, text=True, timeout=300)
    text = re.sub(r"\x1b\[[0-9;]*m", "", listed.stdout + listed.stderr)
    state = dict(re.findall(r"(nbgrader\.server_extensions\.\w+) (enabled|disabled)", text))
    assert state == {"nbgrader.server_extensions.formgrader": "disabled",
                     "nbgrader.server_extensions.course_list": "disabled",
                     "nbgrader.server_extensions.assignment_list": "enabled",
                     "nbgrader.server_extensions.validate_assignment": "enabled"}, text


# -- what the image holds ---------------------------------------------------------------------


class _Daemon:
    """Stands in for the Docker daemon: keeps the build context repo2docker sends it."""

    context: bytes = b""

    def build(self, **kwargs):
        self.context = kwargs["fileobj"].getvalue()
        return iter(())


def _checkout(folder: Path) -> Path:
    """The repository as a clone of the working tree has it: tracked and new files (not the
    ignored ones), and a .git folder."""
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT,
                            capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, folder / name)
    subprocess.run(["git", "init", "-q"], cwd=folder, check=True)
    return folder


@pytest.fixture(scope="module")
def image_files(tmp_path_factory) -> tuple[Path, list[str]]:
    """(a checkout, the files repo2docker puts into the image from it, relative to the repo)."""
    if REPO2DOCKER is None:
        pytest.skip("jupyter-repo2docker is missing: pip install -e '.[test]'")
    import io
    import os
    import tarfile

    from repo2docker.app import Repo2Docker

    folder = _checkout(tmp_path_factory.mktemp("checkout"))
    app = Repo2Docker()
    here = os.getcwd()
    os.chdir(folder)  # repo2docker builds from inside the checkout, as it does
    try:
        buildpack = next(bp for bp in (BP(base_image=app.base_image) for BP in app.buildpacks)
                         if bp.detect())
        buildpack.platform = app.platform  # as repo2docker's build sets it
        daemon = _Daemon()
        list(buildpack.build(daemon, "checkpoint-lab:test", 0,
                             {"NB_USER": "jovyan", "NB_UID": "1000"}, [], {}))
    finally:
        os.chdir(here)
    with tarfile.open(fileobj=io.BytesIO(daemon.context)) as tar:
        names = [m.name[len("src/"):] for m in tar.getmembers()
                 if m.isfile() and m.name.startswith("src/")]
    assert "environment.yml" in names, "not the context of the repository"
    return folder, sorted(names)


def test_the_student_image_holds_no_mark_scheme_solution_test_or_history(image_files):
    _, names = image_files
    for left_out in ("solutions/", "exercises/src/", "tests/", ".git/"):
        assert not [n for n in names if n.startswith(left_out)], left_out
    released = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "exercises").glob("*.ipynb"))
    lessons = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "lessons").glob("*.ipynb"))
    assert len(released) == 4 and set(released) <= set(names)
    assert lessons and set(lessons) <= set(names)
    for needed in ("environment.yml", "apt.txt", "postBuild", "constraints.txt", "pyproject.toml",
                   "graders/data/jupyter/env/etc/jupyter/nbgrader_config.py"):
        assert needed in names, needed


def _words(text: str) -> str:
    return " ".join(text.split())


def _secrets() -> list[str]:
    """What only the instructor's side holds: each item of each mark scheme, each paragraph of
    each model answer (whitespace made single spaces)."""
    found = []
    for source in sorted((ROOT / "exercises" / "src").glob("*.py")):
        text = source.read_text()
        for block in re.findall(r"# ### BEGIN SOLUTION\n(.*?)# ### END SOLUTION", text, re.S):
            plain = "\n".join(line[2:] if line.startswith("# ") else line.lstrip("#")
                              for line in block.splitlines())
            found += [_words(item) for item in re.split(r"\n- ", plain) if len(item) > 60]
    for answer in sorted((ROOT / "solutions").glob("*.written_answers.md")):
        found += [_words(p) for p in answer.read_text().split("\n\n")
                  if len(p) > 80 and not p.startswith("#")]
    return found


def _text_of(path: Path) -> str | None:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        return None
    if path.suffix == ".ipynb":
        cells = json.loads(text).get("cells", [])
        text = "\n".join("".join(c.get("source", "")) for c in cells)
    return _words(text)


def test_no_file_of_the_image_holds_a_mark_scheme_or_a_model_answer(image_files):
    folder, names = image_files
    secrets = _secrets()
    assert len(secrets) > 10, "the mark schemes were not found: the test would prove nothing"
    for name in names:
        text = _text_of(folder / name)
        leaked = [item for item in secrets if text and item in text]
        assert not leaked, (name, leaked[:2])


@pytest.mark.install
@pytest.mark.sandbox
@pytest.mark.timeout(900)
def test_every_lesson_runs_from_the_images_files(image_files, monkeypatch):
    import nbformat
    from nbclient import NotebookClient

    folder, names = image_files
    image = folder.parent / "image"
    for name in names:
        (image / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(folder / name, image / name)
    monkeypatch.setenv("PYTHONPATH", str(image))  # the kernels import the image's graders
    for path in sorted((image / "lessons").glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        nb.cells.append(nbformat.v4.new_code_cell("import graders\nprint(graders.__file__)"))
        NotebookClient(nb, timeout=300, kernel_name="python3", allow_errors=True,
                       resources={"metadata": {"path": str(path.parent)}}).execute()
        errors = [f"{o.ename}: {o.evalue}"[:300] for c in nb.cells if c.cell_type == "code"
                  for o in c.outputs if o.output_type == "error"]
        assert not errors, (path.name, errors)
        where = "".join(o.get("text", "") for o in nb.cells[-1].outputs)
        assert where.startswith(str(image)), where


def test_the_lesson_view_of_a_multi_call_turn_is_the_reference_run_recorded():
    from fake_llm import load_scenario
    from graders.teaching import parallel_turn

    recorded = json.loads(parallel_turn._EVENTS.read_text())
    lessons = "".join(p.read_text() for p in (ROOT / "lessons").glob("*.py"))
    shown = set(re.findall(r"(?:show_turn|turn_moments|turn_table)\(\"([a-z-]+)\"", lessons))
    assert shown and set(recorded) == shown == set(parallel_turn.SHOWN), (shown, set(recorded))
    for name, events in recorded.items():
        fresh = json.loads(json.dumps(parallel_turn.record_reference(load_scenario(name))))
        assert events == fresh, (f"{parallel_turn._EVENTS} is out of date: run "
                                 "python -m graders.teaching.parallel_turn")
