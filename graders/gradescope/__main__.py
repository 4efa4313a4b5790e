"""``python -m graders.gradescope [AUTOGRADER_DIR]``: what Gradescope's ``run_autograder`` runs."""

import sys

from graders.gradescope.results import main

sys.exit(main())
