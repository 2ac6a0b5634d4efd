"""The admissible readings of the resample family's open regions besides the suite's own
(docs/spec-notes.md §11), as whole implementations in the Misreading API: not misreadings,
never diagnosed; tests/judge/test_judge_readings.py runs each as a backend, and each must PASS
every case it covers. The operators' expectations enumerate the same readings (a one-of model
per element at RESAMPLE and RESAMPLE1's nearest ties; Expected.readings for RESAMPLE3's silent
regions, antialias.readings).
"""

from __future__ import annotations

import numpy as np

from conformance.ops.resample.misreadings import BOTH, _entry, _nearest_by
from conformance.ops.resample.misreadings_antialias import ADMISSIBLE as ANTIALIASED
from conformance.spec import notes

_HALVES_TO_EVEN = _nearest_by(np.rint)
_HALVES_DOWN = _nearest_by(lambda c: np.ceil(c - 0.5))

#: The admissible readings of RESAMPLE and RESAMPLE1's open region, the ties (NOTES §4: either
#: neighbour at a coordinate that is exactly a half), run like backends by the self-check
#: (tests/judge/test_judge_readings.py): each must PASS every case it covers.
TIES = (
    _entry("nearest-halves-to-even",
           "nearest rounding the coordinate half to even (rint(c)) instead of halves up "
           "(floor(c + 0.5))",
           BOTH, notes("4"), _HALVES_TO_EVEN[0], _HALVES_TO_EVEN[1]),
    _entry("nearest-halves-down",
           "nearest rounding halves down (ceil(c - 0.5)) instead of up (floor(c + 0.5))",
           BOTH, notes("4"), _HALVES_DOWN[0], _HALVES_DOWN[1]),
)

ADMISSIBLE = (*TIES, *ANTIALIASED)
