"""The command that reruns one case alone: made here, and only here, for every face that prints
one (`dmlconf show`, the reports, the pytest plugin, `dmlconf explore`), so that all of them
print the same command for the same case and options:

    dmlconf run --json reports/repro-SAFE_ID.json --cases PATH... -k ID --backend NAME
        [--level L] [--execution-flags F,...]

- --json: the case's own results file (repro_json: SAFE_ID is the id with every run of
  characters other than letters, digits, '.', '_' and '-' made one '-'), so that rerunning one
  case never overwrites the results of the full run (reports/results.json by default); it
  comes first, so that a --json appended to the command wins;
- PATH: where the case is read from: its own file where the face knows it (show, the plugin,
  the explorer), else the run's case paths (a report knows only the results document);
- --level: the feature level the run chose. None chosen is the backend's highest (the
  default), except for a case whose expectation holds only below some level
  (feature_level_below): the default would not run it at all, so the command claims the case's
  own level. (A report infers the choice: a claimed level below the backend's highest was
  chosen.)
- --execution-flags: the run's DML_EXECUTION_FLAGS, which change the judgement (they widen the
  float16 envelope: docs/tolerances.md).

Pure data in, text out (nothing of the session's machinery is imported), so that a report
can make it from a results document alone.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path

from conformance.levels import FeatureLevel
from conformance.results.document import ResultsDocument

__all__ = ["chosen_level", "repro_json", "reproduce_command"]

_UNSAFE_IN_NAME = re.compile(r"[^A-Za-z0-9._-]+")


def repro_json(case_id: str) -> str:
    """The results file of the reproduce command of case_id: reports/repro-SAFE_ID.json, never
    the full run's reports/results.json."""
    return f"reports/repro-{_UNSAFE_IN_NAME.sub('-', case_id).strip('-.')}.json"


def reproduce_command(case_id: str, case_paths: Sequence[str | Path], backend: str, *,
                      level: FeatureLevel | str | None = None,
                      execution_flags: Sequence[str] = (),
                      case_level: FeatureLevel | str | None = None,
                      case_level_below: FeatureLevel | str | None = None) -> str:
    """`dmlconf run` of the case alone. level: the level the run chose (a FeatureLevel or its
    text; None: the backend's default); execution_flags: their names; case_level and
    case_level_below: the case's feature_level and feature_level_below (text or FeatureLevel;
    the case's own level is claimed when no level is chosen and it holds only below one)."""
    words = ["dmlconf", "run", "--json", repro_json(case_id)]
    for path in case_paths:
        words += ["--cases", str(path)]
    words += ["-k", case_id, "--backend", backend]
    if level is None and case_level_below is not None and case_level is not None:
        level = case_level
    if level is not None:
        words += ["--level", str(level)]
    if execution_flags:
        words += ["--execution-flags", ",".join(execution_flags)]
    return shlex.join(words)


def chosen_level(doc: ResultsDocument) -> str | None:
    """The level a results document's run chose: the level it claimed where that is below the
    backend's highest (its capabilities' feature_level); None where it claimed the highest, the
    default, or the document does not say."""
    claimed = doc.feature_level if doc.has("feature_level") else None
    backend = doc.backend
    capabilities = backend.get("capabilities") if isinstance(backend, Mapping) else None
    highest = capabilities.get("feature_level") if isinstance(capabilities, Mapping) else None
    if not isinstance(claimed, str) or not isinstance(highest, str) or claimed == highest:
        return None
    return claimed
