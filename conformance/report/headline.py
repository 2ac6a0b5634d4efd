"""What the top of the HTML and Markdown reports says of the run: its outcome with the exit
status `dmlconf run` gave ("PASS: no decisive case failed — exit 0", "FAIL: 3 cases failed
(FAIL 2, ERROR 1) — exit 1": `outcome`), and the backend by the name it gives itself
(`backend_name`: backend.declared_name, not how --backend named it, such as a file's path, nor
the internal module a backend file is loaded as, `_dmlconf_backend_<digest>`).
"""

from __future__ import annotations

import re
from typing import Any

from conformance.present import document_scope
from conformance.results import (
    FAILING,
    ResultsDocument,
    Status,
    counted,
    decisive,
    exit_status,
    for_scope,
)

#: The name a backend that names itself nothing has (conformance.backend.Backend.name).
DEFAULT_NAME = "backend"
#: The module a backend file (--backend path/to/file.py:Class) is loaded as.
_FILE_MODULE = re.compile(r"^_dmlconf_backend_\w+?\.")


def declared_name(backend: Any) -> str:
    """The name the backend gives itself (backend.declared_name, Backend.name), or "" where it
    kept the default or the document is older than the field."""
    backend = backend if isinstance(backend, dict) else {}
    declared = backend.get("declared_name")
    ok = isinstance(declared, str) and declared.strip() and declared != DEFAULT_NAME
    return declared if ok else ""


def backend_name(backend: Any) -> str:
    """The backend by the name it gives itself (declared_name), else as the run named it
    (backend.name: a registered name, package.module:Class or path/to/file.py:Class): a
    document older than declared_name, a backend that kept the default name."""
    given = backend.get("name", "") if isinstance(backend, dict) else ""
    return declared_name(backend) or str(given)


def backend_class(backend: Any) -> str:
    """The backend's class (backend.class) without the internal module a backend file is
    loaded as ("_dmlconf_backend_7b62....MyBackend" reads "MyBackend")."""
    cls = backend.get("class", "") if isinstance(backend, dict) else ""
    return _FILE_MODULE.sub("", str(cls))


def claim(doc: ResultsDocument) -> str:
    """What the run claims, as the title says it: "feature level 6_2", and a scoped claim's
    scope, "feature level 6_2 for <operator> (FLOAT32)" (results.scope)."""
    return f"feature level {doc.feature_level}{for_scope(document_scope(doc))}"


def scope_text(doc: ResultsDocument) -> str:
    """A scoped claim's scope in words, "<operator> (FLOAT32)"; "" for the whole level."""
    return for_scope(document_scope(doc)).removeprefix(" for ")


def strict(doc: ResultsDocument) -> bool:
    """Whether the run was made with --strict (an XPASS fails it), as its command says."""
    return "--strict" in str(doc.command or "").split()


def outcome(doc: ResultsDocument) -> dict[str, Any]:
    """The run's outcome: "exit", the exit status `dmlconf run` gave for it (results.exit_status,
    with --strict where the command has it; 1 too for an incomplete run), "passed" (exit 0),
    "failed" (the decisive failing cases), and "text", the banner: "PASS: no decisive case
    failed — exit 0", or "FAIL: 3 cases failed (FAIL 2, ERROR 1); 2 case file problems — exit
    1"."""
    is_strict = strict(doc)
    failing = [r for r in decisive(doc.results) if r.status in FAILING]
    xpass = [r for r in decisive(doc.results) if r.status == Status.XPASS] if is_strict else []
    problems = len(doc.load_errors or [])
    incomplete = doc.complete is False or problems > 0
    code = exit_status(doc.results, strict=is_strict) or int(incomplete)
    parts = []
    if failing:
        by = ", ".join(f"{s} {n}" for s in FAILING
                       if (n := sum(1 for r in failing if r.status == s)))
        parts.append(f"{counted(len(failing), 'case')} failed ({by})")
    if xpass:
        parts.append(f"{counted(len(xpass), 'unexpected pass', 'unexpected passes')} "
                     "(XPASS, --strict)")
    if incomplete:
        parts.append(counted(problems, "case file problem") if problems
                     else "some cases could not be loaded")
    text = (f"FAIL: {'; '.join(parts)}" if code else "PASS: no decisive case failed")
    return {"exit": code, "passed": not code, "failed": len(failing),
            "text": f"{text} — exit {code}"}
