"""`python -m abstaingen` runs the command line."""

import sys

from abstaingen.flows.cli import main

sys.exit(main())
