"""The Gradescope autograder zip: ``setup.sh``, ``run_autograder`` and what they need.

Gradescope's format (https://gradescope-autograders.readthedocs.io/en/latest/specs/): a zip with
``setup.sh`` and ``run_autograder`` at its root; Gradescope unpacks it into
``/autograder/source``, runs ``setup.sh`` once as root on its Ubuntu image, copies
``run_autograder`` to ``/autograder/run_autograder`` and runs it as root for each submission.
Ours holds the course's code (``checkpoint-lab/``: the graders, the fake model, the reference
loop, ``pyproject.toml`` and ``constraints.txt``) and ``checkpoint_lab_course.json``, what the
course's source notebooks say about the assignment (its exercises and the points of their
written answers).
"""

from __future__ import annotations

import json
import stat
import zipfile
from pathlib import Path

from graders.gradescope.results import MANIFEST_NAME, course_manifest

__all__ = ["SETUP_SH", "RUN_AUTOGRADER", "PROJECT_FILES", "INSTALLS", "build_autograder",
           "run_autograder_script", "WITHOUT_LANDLOCK_LINES"]

ROOT = Path(__file__).resolve().parents[2]

#: What the zip takes from the checkout, under ``checkpoint-lab/``.
PROJECT_FILES = ("pyproject.toml", "README.md", "constraints.txt", "graders", "fake_llm",
                 "solutions")

#: The Debian/Ubuntu packages setup.sh installs: the sandbox, the observer, setpriv and prlimit,
#: and libseccomp (the sandbox's system-call filters).
INSTALLS = ("bubblewrap", "strace", "util-linux", "libseccomp2")

SETUP_SH = """\
#!/usr/bin/env bash
# Checkpoint Lab's autograder, set up once by Gradescope (as root, on its Ubuntu image):
# Python 3.11+, the course's packages at the versions in constraints.txt, bubblewrap (the
# sandbox where namespaces can be made), strace (the observer), util-linux (setpriv, prlimit)
# and libseccomp (system-call filters). Gradescope's container makes no namespaces: there each
# submission runs as a uid of its own (README, "Grading where bubblewrap cannot run"), which
# must be able to read this Python (apt's, under /usr) and nothing of /autograder (0700).
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
SOURCE=/autograder/source
apt-get update
apt-get install -y --no-install-recommends {installs} ca-certificates
if python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    apt-get install -y --no-install-recommends python3 python3-venv python3-pip
    PYTHON=python3
else
    # Ubuntu 22.04's python3 is 3.10; its universe has python3.11.
    apt-get install -y --no-install-recommends python3.11 python3.11-venv
    PYTHON=python3.11
fi
"$PYTHON" -m venv /autograder/venv
/autograder/venv/bin/python -m pip install --disable-pip-version-check -q \\
    -c "$SOURCE/checkpoint-lab/constraints.txt" -e "$SOURCE/checkpoint-lab"
chmod -R go-w "$SOURCE" /autograder/venv
chmod 700 /autograder
/autograder/venv/bin/checkpoint-lab --version
""".format(installs=" ".join(INSTALLS))

#: ``run_autograder``, its Landlock lines left to fill (:func:`run_autograder_script`).
RUN_AUTOGRADER = """\
#!/usr/bin/env bash
# Checkpoint Lab's autograder, run by Gradescope (as root) for each submission: grades the
# notebooks in /autograder/submission and writes /autograder/results/results.json. Student
# code runs only in the sandbox (bubblewrap, an unprivileged uid of its own, no /autograder).
set -u
chmod 700 /autograder  # the grader, the reference, the results: no other user's, ever
cd /autograder
export CHECKPOINT_LAB_SANDBOX=on
export TMPDIR=/tmp  # each run's folder, never under /autograder
{landlock}export PYTHONPATH=/autograder/source/checkpoint-lab
exec /autograder/venv/bin/python -m graders.gradescope /autograder
"""
#: What ``checkpoint-lab gradescope --without-landlock`` adds to ``run_autograder``.
WITHOUT_LANDLOCK_LINES = """\
# Built with `checkpoint-lab gradescope --without-landlock`: where the kernel has no Landlock,
# the uid tier grades all the same (what plain permissions close stays closed: /autograder).
export CHECKPOINT_LAB_WITHOUT_LANDLOCK=1
"""


def run_autograder_script(without_landlock: bool = False) -> str:
    """``run_autograder``: without Landlock the uid tier refuses, as ``checkpoint-lab grade``
    does, unless the autograder was built with ``--without-landlock``."""
    return RUN_AUTOGRADER.format(landlock=WITHOUT_LANDLOCK_LINES if without_landlock else "")


def _add(archive: zipfile.ZipFile, name: str, data: bytes, executable: bool = False) -> None:
    info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
    mode = 0o755 if executable else 0o644
    info.external_attr = (stat.S_IFREG | mode) << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    archive.writestr(info, data)


def _project_files(repo: Path):
    for name in PROJECT_FILES:
        path = repo / name
        if path.is_file():
            yield name, path
        elif path.is_dir():
            for item in sorted(path.rglob("*")):
                rel = item.relative_to(repo)
                if item.is_file() and "__pycache__" not in rel.parts and item.suffix != ".pyc":
                    yield rel.as_posix(), item


def build_autograder(source_dir: Path, out: Path, *, repo: Path = ROOT,
                     without_landlock: bool = False) -> dict:
    """Write the autograder zip for the assignment in ``source_dir`` to ``out``.

    ``source_dir`` is the course's ``source/<assignment>/`` folder; ``repo`` a checkout of
    Checkpoint Lab (it must hold ``solutions/`` and ``constraints.txt``); ``without_landlock``
    lets the uid tier grade without Landlock (:func:`run_autograder_script`). Returns the
    manifest.
    Raises ValueError when either is not what it must be.
    """
    missing = [name for name in PROJECT_FILES if not (repo / name).exists()]
    if missing:
        raise ValueError(f"{repo} lacks {', '.join(missing)}: build the autograder from a "
                         "checkout of Checkpoint Lab (git clone), not from an installed package")
    manifest = course_manifest(source_dir)
    out = Path(out)
    tmp = out.with_name(out.name + ".part")
    with zipfile.ZipFile(tmp, "w") as archive:
        _add(archive, "setup.sh", SETUP_SH.encode(), executable=True)
        _add(archive, "run_autograder", run_autograder_script(without_landlock).encode(),
             executable=True)
        _add(archive, MANIFEST_NAME, json.dumps(manifest, indent=1).encode())
        for name, path in _project_files(repo):
            _add(archive, f"checkpoint-lab/{name}", path.read_bytes())
    tmp.replace(out)
    return manifest
