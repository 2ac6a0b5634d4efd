"""The judge: how a backend's outputs are held against the spec (comparison, diagnosis)."""
