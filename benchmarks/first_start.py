"""How long a newcomer waits: a fresh clone's ``python3 course.py lab`` until JupyterLab answers.

Clones this checkout (its committed HEAD) into a temporary folder, runs ``python3 course.py lab
--no-browser`` there with the Python that runs this script, and times two moments: when
``course.py`` says "Starting JupyterLab" (``.venv`` made and installed, workspace copied) and when
JupyterLab answers HTTP. pip's cache is whatever this machine has (say so with ``--cache``). Writes
``docs/first_start.json`` with the machine (cores, processor, Python) and its load before and
after, which README and ``course.py`` quote: the docs' first-start time is this file's.

    python3 benchmarks/first_start.py [--cache warm|cold] [--write]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULT = ROOT / "docs" / "first_start.json"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _processor() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def measure(cache: str) -> dict:
    with tempfile.TemporaryDirectory(prefix="first-start-") as scratch:
        clone = Path(scratch) / "checkpoint-lab"
        subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
        port = _free_port()
        load_before = os.getloadavg()
        log = Path(scratch) / "lab.log"
        env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
        start = time.monotonic()
        with log.open("w") as out:
            process = subprocess.Popen(
                [sys.executable, "course.py", "lab", "--no-browser", "--port", str(port)],
                cwd=clone, stdout=out, stderr=subprocess.STDOUT, env=env,
                start_new_session=True)
        prepared = answered = None
        try:
            while answered is None:
                if process.poll() is not None:
                    raise SystemExit(f"course.py lab ended (exit {process.returncode}):\n"
                                     + log.read_text()[-3000:])
                if prepared is None and "Starting JupyterLab" in log.read_text():
                    prepared = time.monotonic() - start
                try:
                    urllib.request.urlopen(f"http://127.0.0.1:{port}/api", timeout=2).close()
                    answered = time.monotonic() - start
                except OSError:
                    time.sleep(0.5)
        finally:
            os.killpg(process.pid, 15)
            process.wait(timeout=60)
        return {
            "seconds_until_jupyterlab_answers": round(answered, 1),
            "seconds_until_starting_jupyterlab": round(prepared or answered, 1),
            "pip_cache": cache,
            "python": platform.python_version(),
            "machine": {"cores": os.cpu_count(), "processor": _processor(),
                        "system": f"{platform.system()} {platform.release()}"},
            "load_average_before": [round(x, 1) for x in load_before],
            "load_average_after": [round(x, 1) for x in os.getloadavg()],
            "measured": time.strftime("%Y-%m-%d", time.gmtime()),
        }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", choices=("warm", "cold"), default="warm",
                        help="whether pip's cache already held the packages (recorded only)")
    parser.add_argument("--write", action="store_true", help=f"write {RESULT.relative_to(ROOT)}")
    args = parser.parse_args()
    result = measure(args.cache)
    print(json.dumps(result, indent=2))
    if args.write:
        RESULT.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
