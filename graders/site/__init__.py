"""The course as a static JupyterLite site: lessons and exercises in a browser tab, nothing
installed, no network once built (``checkpoint-lab site -o DIR``).

``pins`` names what the site is built from, ``fetch`` brings it from npm and PyPI into a cache,
``kernel`` lays out the browser kernel's files and lockfile, ``course_wheel`` packs ``graders``
and ``fake_llm``, ``notebooks`` places the released notebooks, ``build`` runs ``jupyter lite
build`` on the whole.
"""
