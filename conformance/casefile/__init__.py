"""Case files: the YAML format (docs/case-format.md; its JSON Schema is case.schema.json in this
package), loaded with file:line errors into the Case model the runner consumes.

One module per job, each importing only those above it:
  model         Case and its parts (Source, Take, Expectation, Relation, NamedCall)
  errors        CaseFileError, 'file:line: what is wrong', the one error loading raises
  safe_yaml     the YAML composer: plain data with line numbers, bounded (the Limits)
  schema_check  the schema check, messages naming the key and its line
  selection     the case files under paths, -k patterns, the hash of a case set
  build         a checked case mapping -> a Case (calls, sources, expectations); logical values
  cache         the parse cache: checked plain data keyed by a file's bytes (never stale)
  load          load_cases / load_file / load_text: read, parse, check, build; index /
                select_indexed / build_indexed for a run that builds only the cases it selects

The public names are re-exported here: `from conformance.casefile import load_cases, Case`.
"""

from conformance.casefile.build import MAX_HASHED_BYTES, UNEXPECTED, logical_values
from conformance.casefile.errors import CaseFileError
from conformance.casefile.load import (
    Indexed,
    build_indexed,
    index,
    load_cases,
    load_file,
    load_text,
)
from conformance.casefile.load import select as select_indexed
from conformance.casefile.model import (
    SINGLE,
    Case,
    Expectation,
    NamedCall,
    Relation,
    Source,
    Take,
)
from conformance.casefile.safe_yaml import MAX_DEPTH, MAX_FILE_BYTES, MAX_INT_BITS, MAX_VALUES
from conformance.casefile.schema_check import schema
from conformance.casefile.selection import (
    NO_SUCH_PATH,
    case_files,
    case_set_hash,
    id_matcher,
    id_matches,
    require_paths,
    select,
)

__all__ = ["MAX_DEPTH", "MAX_FILE_BYTES", "MAX_HASHED_BYTES", "MAX_INT_BITS", "MAX_VALUES",
           "NO_SUCH_PATH", "SINGLE", "UNEXPECTED", "Case", "CaseFileError", "Expectation",
           "Indexed", "NamedCall", "Relation", "Source", "Take", "build_indexed", "case_files",
           "case_set_hash", "id_matcher", "id_matches", "index", "load_cases", "load_file",
           "load_text", "logical_values", "require_paths", "schema", "select", "select_indexed"]
