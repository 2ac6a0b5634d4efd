"""`python -m dmlconf ARGS` is `dmlconf ARGS`."""

import sys

from conformance.cli import main

if __name__ == "__main__":
    sys.exit(main())
