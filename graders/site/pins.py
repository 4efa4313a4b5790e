"""What the browser site is built from, pinned: Pyodide's files from npm, the kernel's wheels and
its JupyterLab extension from PyPI, each with the hash the registry gave when it was pinned.

The build tools themselves (``jupyterlite-core``, ``pyodide-lock``) are Python packages of the
``site`` extra, pinned in ``constraints.txt`` like every other. ``jupyterlite-pyodide-kernel`` is
not installed but downloaded like the kernel's wheels: installed, it would put its JupyterLab
extension into the course's own JupyterLab too, where it has no place.

To move to a newer Pyodide: the kernel extension's own default (``PYODIDE_VERSION`` in
``jupyterlite_pyodide_kernel/constants.py`` in its wheel) names the version it was tested with; its
``pyodide-lock.json`` names the pure-Python wheels below at the versions it was built with. Take
the same versions from PyPI and record their sha256 (``pip download --no-deps`` then
``sha256sum``), and the npm package's ``dist.integrity`` (``npm view pyodide@V dist.integrity``).
"""

from __future__ import annotations

__all__ = ["PYODIDE", "PYODIDE_FILES", "KERNEL_WHEELS", "KERNEL_EXTENSION", "PYTHON_VERSION"]

#: The npm package with Pyodide's core files, and its integrity (``npm view ... dist.integrity``).
PYODIDE = {
    "name": "pyodide",
    "version": "314.0.6",
    "integrity": "sha512-BKDTJyIqFxC4BExLqeRS3f5xvXZIjOt8C3zGLN/Cc7tFxSwvKVhVkchQQ2AGLOtR4YrVOIFx"
                 "bV8poyDOOmWwxQ==",
}

#: The files of the npm package the site serves (the kernel's worker loads ``pyodide.mjs``; the
#: rest are what it loads in turn). ``pyodide-lock.json`` is rewritten, not copied.
PYODIDE_FILES = ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip")

#: The Python of that Pyodide (``info.python`` of its lockfile): the wheels must install on it.
PYTHON_VERSION = "3.14"

#: The Pyodide kernel's JupyterLab extension, and the wheels it ships for the kernel (``piplite``,
#: ``pyodide_kernel``, its stand-ins for ``ipykernel`` and ``widgetsnbextension``):
#: (name, version, sha256). Its default Pyodide is the one above.
KERNEL_EXTENSION = ("jupyterlite-pyodide-kernel", "0.8.6",
                    "c9e698420e7f95f156c09c1474898ee6727b35b1740b369cb5f5aaa59ea73d3f")

#: Pure-Python wheels from PyPI that the kernel loads at start: (name, version, sha256).
#: micropip and packaging (the kernel's package manager), IPython and what it needs, jedi/parso
#: (completion), comm and ipywidgets (the lessons' widgets). Versions are those of Pyodide
#: 314.0.6's own lockfile where it has them, ``constraints.txt``'s otherwise.
KERNEL_WHEELS = (
    ("asttokens", "3.0.1", "15a3ebc0f43c2d0a50eeafea25e19046c68398e487b9f1f5b517f7c0f40f976a"),
    ("comm", "0.2.3", "c615d91d75f7f04f095b30d1c1711babd43bdc6419c1be9886a85f2f4e489417"),
    ("decorator", "5.2.1", "d316bb415a2d9e2d2b3abcc4084c6502fc09240e292cd76a76afc106a1c8e04a"),
    ("executing", "2.2.1", "760643d3452b4d777d295bb167ccc74c64a81df23fb5e08eff250c425a4b2017"),
    ("ipython", "9.12.0", "0f2701e8ee86e117e37f50563205d36feaa259d2e08d4a6bc6b6d74b18ce128d"),
    ("ipython-pygments-lexers", "1.1.1",
     "a9462224a505ade19a605f71f8fa63c2048833ce50abc86768a0d81d876dc81c"),
    ("ipywidgets", "8.1.9", "f2b8cbcaae10252b809fbe4d7470db75c09b769a32cbf816d20e5ca6d3c5a79d"),
    ("jedi", "0.19.2", "a8ef22bde8490f57fe5c7681a3c83cb58874daf72b4784de3cce5b6ef6edb5b9"),
    ("jupyterlab-widgets", "3.0.17",
     "40ac1e9955acf116c4d995d9bfa082d86ad9ec6d91c4f134827cf5e0a5eb75e0"),
    ("matplotlib-inline", "0.2.1",
     "d56ce5156ba6085e00a9d54fead6ed29a9c47e215cd1bba2e976ef39f5710a76"),
    ("micropip", "0.11.1", "768de165adb8e66906039d8fec4127a57f522dfdf8e6fbff877a4616941ecfd3"),
    ("packaging", "26.1", "5d9c0669c6285e491e0ced2eee587eaf67b670d94a19e94e3984a481aba6802f"),
    ("parso", "0.8.6", "2c549f800b70a5c4952197248825584cb00f033b29c692671d3bf08bf380baff"),
    ("prompt-toolkit", "3.0.52",
     "9aac639a3bbd33284347de5ad8d68ecc044b91a762dc39b7c21095fcd6a19955"),
    ("pure-eval", "0.2.3", "1db8e35b67b3d218d818ae653e27f06c3aa420901fa7b081ca98cbedc874e0d0"),
    ("pygments", "2.20.0", "81a9e26dd42fd28a23a2d169d86d7ac03b46e2f8b59ed4698fb4785f946d0176"),
    ("six", "1.17.0", "4721f391ed90541fddacab5acf947aa0d3dc7d27b2e1e8eda2be8970586c3274"),
    ("stack-data", "0.6.3", "d5558e0c25a4cb0853cddad3d77da9891a08cb85dd9f9f91b9f8cd66e511e695"),
    ("traitlets", "5.14.3", "b74e89e397b1ed28cc831db7aea759ba6640cb3de13090ca145426688ff1ac4f"),
    ("wcwidth", "0.6.0", "1a3a1e510b553315f8e146c54764f4fb6264ffad731b3d78088cdb1478ffbdad"),
)
