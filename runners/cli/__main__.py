"""`python -m runners.cli`: the same as the `collsweep` command."""

import sys

from runners.cli.main import main

sys.exit(main())
