"""``checkpoint-lab site -o DIR``: build the course as a static JupyterLite site.

The site is the eight lessons and four exercises in JupyterLab, running on Pyodide in the browser
tab: nothing to install, no server, no network once built. Publish ``DIR`` on any static host
(README, "Try it in your browser"). The first build downloads Pyodide from npm and the kernel's
wheels from PyPI into ``.site-cache/`` (about 12 MB); later builds need no network.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from graders.cli import UsageError

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``site`` subcommand's arguments."""
    parser.add_argument("-o", "--output", metavar="DIR", required=True, type=Path,
                        help="folder to write the site into (a site built there before is "
                        "replaced; any other non-empty folder is refused)")
    parser.add_argument("--cache", metavar="DIR", type=Path, default=None,
                        help="where downloads are kept between builds (default: .site-cache/ "
                        "in the course's folder)")


def run(args: argparse.Namespace) -> int:
    """Build the site; print where it is and how to look at it."""
    from graders.site.build import build_site
    from graders.site.fetch import SiteError
    from graders.workspace.notebooks import WorkspaceError, course_root

    try:
        report = build_site(course_root(), args.output, args.cache)
    except (SiteError, WorkspaceError) as err:
        raise UsageError(str(err)) from None
    print(f"Built the course's site in {report.output} ({report.size_bytes / 1e6:.0f} MB, "
          f"{report.seconds:.0f} s): {len(report.notebooks)} notebooks, "
          f"{len(report.packages)} packages the browser kernel loads at start.")
    print(f"Look at it: python -m http.server -d {report.output} 8000, then open "
          "http://127.0.0.1:8000/ (any static host serves it the same way).")
    return 0
