"""The harness's own tests (tests/README.md): a package, so that a test imports what the tests
share as `tests.support`."""
