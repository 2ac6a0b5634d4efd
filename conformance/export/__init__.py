"""`dmlconf export`: the selected cases as self-contained vectors for harnesses without Python
(docs/vectors.md). A face of the top layer, like report/ and generate/: it reads cases through
the session's selection and the runner's materialising and expectations, and writes files.

  desc        a call's operator desc in DirectML's names and enum values (JSON)
  expectfile  an output's or a relation's acceptance rule (the binary .expect format)
  vectors     per case: descs, input buffers, expectations, reference outputs; index.json
  c/          dmlconf_vectors.h/.c, the C reader and judge of .expect files, and
              dmlconf_check.c, its command line (copied into every export)
"""

from conformance.export.vectors import (
    C_SOURCES,
    FORMAT,
    FORMAT_VERSION,
    NotExportable,
    applies,
    export,
    export_session,
)

__all__ = ["C_SOURCES", "FORMAT", "FORMAT_VERSION", "NotExportable", "applies", "export",
           "export_session"]
