"""`python -m abstaingen` runs the command line."""

import sys

from abstaingen.cli import main

sys.exit(main())
