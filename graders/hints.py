"""An earlier path of ``graders.notebook.Hints``: notebooks of earlier releases import it from
here, and a student's workspace keeps its copy of a notebook across releases. It warns
(``DeprecationWarning``), naming :mod:`graders.notebook`."""

from graders.notebook import warned_alias

__getattr__ = warned_alias("graders.hints", ("Hints",))
