"""``python -m chronolog`` is the ``chronolog`` command."""
import sys

from chronolog.cli import main

sys.exit(main())
