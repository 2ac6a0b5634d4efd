"""Certification (docs/certification.md): `dmlconf certify` runs the claimed level's mustpass
list in the tamper-proof mode and writes a submission bundle (bundle.py); `dmlconf verify`
checks a bundle's integrity, completeness and consistency (verify.py), and with --rerun whether
a sample of its cases reproduces with the reviewer's backend (rerun.py)."""

from conformance.certify.bundle import CertifyError, Request, certify
from conformance.certify.verify import Verification, verify

__all__ = ["CertifyError", "Request", "Verification", "certify", "verify"]
