"""Results: one record per case and its status (model: Result, Status), the verdict per feature
level (verdicts), the results document, typed (document: ResultsDocument and its parts), the
results file, its only writer and its only reader (io), baselines of known failures (baseline)
and the diff of two runs (diff). docs/results-format.md describes the file.

The names of model, document, verdicts and io are re-exported here: `from conformance.results
import Result, Status, ResultsDocument, FAILING, read` (baseline and diff are imported as
modules: `from conformance.results import baseline`). FeatureLevel, the type of a verdict's
levels, is re-exported for the reports, which read nothing of the suite but this package."""

from conformance.levels import FeatureLevel
from conformance.results.document import (
    BaselineSummary,
    Execution,
    LoadError,
    MergedExecution,
    MustpassRef,
    Platform,
    Record,
    ResultsDocument,
    Shard,
    ShardRun,
    Verdict,
    execution_of,
)
from conformance.results.io import (
    FORMAT,
    ResultsFileError,
    document,
    platform_info,
    read,
    write,
    write_atomic,
)
from conformance.results.matrix import case_family
from conformance.results.model import (
    FAILING,
    PASSING,
    STATUSES,
    UNSAFE,
    Result,
    Status,
    counted,
    decisive,
    safe_text,
    sanitise,
    summary,
)
from conformance.results.reproduce import chosen_level, reproduce_command
from conformance.results.scope import Scope, ScopeError, for_scope
from conformance.results.verdicts import (
    NOT_RECOGNISED,
    VERDICT_LEVELS,
    conformant_text,
    diagnoses,
    exit_status,
    reading_words,
    verdicts,
)

__all__ = [
    "FAILING",
    "FORMAT",
    "NOT_RECOGNISED",
    "PASSING",
    "STATUSES",
    "UNSAFE",
    "VERDICT_LEVELS",
    "BaselineSummary",
    "Execution",
    "FeatureLevel",
    "LoadError",
    "MergedExecution",
    "MustpassRef",
    "Platform",
    "Record",
    "Result",
    "ResultsDocument",
    "ResultsFileError",
    "Scope",
    "ScopeError",
    "Shard",
    "ShardRun",
    "Status",
    "Verdict",
    "case_family",
    "chosen_level",
    "conformant_text",
    "counted",
    "decisive",
    "diagnoses",
    "document",
    "execution_of",
    "exit_status",
    "for_scope",
    "platform_info",
    "read",
    "reading_words",
    "reproduce_command",
    "safe_text",
    "sanitise",
    "summary",
    "verdicts",
    "write",
    "write_atomic",
]
