"""``python -m graders.cli``: the ``checkpoint-lab`` command."""

import sys

from graders.cli import main

sys.exit(main())
