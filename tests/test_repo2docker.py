"""The student image repo2docker builds from this repository (Binder, Zero to JupyterHub).

``jupyter-repo2docker --no-build --debug`` prints the Dockerfile it would build without Docker;
the tests read it. ``postBuild`` runs for real in a throwaway environment (its own
``sys.prefix``, this environment's packages) to show which nbgrader extensions a student keeps.
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
    # environment.yml's `-e .` and `-c constraints.txt` need the repository in place first
    assert copy < install.start()
    # --target-repo-dir reaches the build as this argument (docker build --build-arg)
    assert "ARG REPO_DIR=" in dockerfile and "WORKDIR ${REPO_DIR}" in dockerfile
    assert "--target-repo-dir /srv/checkpoint-lab" in (ROOT / "docs" / "jupyterhub.md").read_text()
    pip = (ROOT / "environment.yml").read_text()
    assert re.search(r"^\s+- -c constraints\.txt$", pip, re.M)
    assert re.search(r"^\s+- -e \.$", pip, re.M)
    assert "python=3.11" in pip


def test_the_image_has_the_sandbox_and_runs_post_build(dockerfile):
    apt = re.search(r"apt-get install --yes --no-install-recommends ([^&]+)&&", dockerfile)
    assert apt and set(apt.group(1).split()) == {"bubblewrap", "strace"}
    assert "RUN ./postBuild" in dockerfile
    assert dockerfile.index("RUN ./postBuild") > dockerfile.index('--file "environment.yml"')


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
