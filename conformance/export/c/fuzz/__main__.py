"""python -m conformance.export.c.fuzz (cli.main)."""

import sys

from conformance.export.c.fuzz.cli import main

sys.exit(main())
