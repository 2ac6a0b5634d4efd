"""The kit an operator package's plug-ins are built with (docs/architecture.md, docs/operators.md):
the misreading type (`misreading`), the rejection a desc may meet (`rejection`), and the case
builders of generated families (`build`, `family`). It stands with the operator layer, below the
judge and the generators that discover the plug-ins, so an operator package imports nothing
above it.
"""
