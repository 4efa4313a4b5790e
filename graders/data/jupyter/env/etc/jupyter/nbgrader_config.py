# Installed with Checkpoint Lab into this environment's etc/jupyter, where every nbgrader command
# and nbgrader's Validate button in JupyterLab read it (with the course directory's own
# nbgrader_config.py after it). It sets nothing: Validate says what a failed check said
# ("Survives a kill during a save: not passed (0/3 points)" and why), not "Partial credit",
# and names an empty written answer by its question (graders.nbgrader_plumbing.validation).
c = get_config()  # noqa: F821
try:
    import graders.nbgrader_plumbing.validation
except ImportError:  # the course was uninstalled, this file left behind
    pass
else:
    graders.nbgrader_plumbing.validation.install()
