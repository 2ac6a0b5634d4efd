"""`python -m dmlconf`: the `dmlconf` command (conformance.cli) run as a module, for where the
console script is not on PATH (a venv not activated, `py -m dmlconf` on Windows)."""
