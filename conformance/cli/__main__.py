"""`python -m conformance.cli ARGS` is `dmlconf ARGS`."""

import sys

from conformance.cli import main

sys.exit(main())
