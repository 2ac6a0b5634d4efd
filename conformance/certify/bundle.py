"""`dmlconf certify`: a certification run and its submission bundle (docs/certification.md).

    the committed case set, checked against the hash the mustpass lists name
      --> the claimed level's mustpass list, run through a Session with RunOptions(certify=True)
          (the backend isolated in worker processes, out of the judge's reach)
      --> a bundle folder (and a .zip of it):
          results.json, report.html, report.md, junit.xml, run.log, environment.json,
          baseline.yaml (when a baseline was used), statement.md, SHA256SUMS

The bundle is written into a hidden folder beside its final place and renamed there when whole,
so an interrupted certification leaves no bundle that looks finished.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import importlib.metadata
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO, cast

import conformance
from conformance import __version__, report
from conformance.backend import registered
from conformance.casefile import case_set_hash
from conformance.flags import ExecutionFlags
from conformance.levels import FeatureLevel
from conformance.present import Progress, document_scope, verdict_line
from conformance.report import headline
from conformance.results import Result, ResultsDocument, Scope, for_scope, mustpass
from conformance.session import RunOptions, Session

RESULTS = "results.json"
ENVIRONMENT = "environment.json"
LOG = "run.log"
BASELINE = "baseline.yaml"
STATEMENT = "statement.md"
SUMS = "SHA256SUMS"
REPORTS = {"html": "report.html", "markdown": "report.md", "junit": "junit.xml"}
#: Every file a bundle has (BASELINE too, when the run used one).
REQUIRED = (RESULTS, ENVIRONMENT, LOG, STATEMENT, *REPORTS.values(), SUMS)
ENVIRONMENT_FORMAT = "dml-conformance-environment/1"
#: The packages whose versions environment.json records, where installed.
PACKAGES = ("dml-conformance", "numpy", "numba", "onnxruntime", "onnxruntime-directml",
            "onnxruntime-webgpu", "torch", "pyyaml", "jinja2")
#: What a statement's fields hold until someone fills them in (verify notes it).
PLACEHOLDER = "<fill in"
DEFAULT_ROOT = Path("certification")


class CertifyError(ValueError):
    """A certification refused before or instead of running (a usage error: exit 2); the
    message says why and what to do."""


@dataclass(frozen=True)
class Request:
    """What `dmlconf certify` is asked for. None means the default throughout."""

    backend: str
    #: The feature level claimed (None: the backend's highest).
    level: FeatureLevel | None = None
    execution_flags: ExecutionFlags = ExecutionFlags.NONE
    #: A baseline file (known failures, waivers): copied into the bundle.
    baseline: str | None = None
    #: The bundle folder (None: certification/<backend>-<level>-<date>/).
    out: Path | None = None
    #: A filled-in statement to put in the bundle instead of the template.
    statement: Path | None = None
    workers: int | None = None
    timeout_s: float | None = None
    memory_cap: int | None = None
    #: Run where the sandbox cannot be made (recorded in the results; None: as
    #: $DMLCONF_CERTIFY_WITHOUT_SANDBOX says).
    without_sandbox: bool | None = None
    #: The command line as given, recorded in results.json and environment.json.
    command: str = ""
    #: A scoped claim (results.scope; docs/certification.md, "Scoped certification"): None,
    #: the whole level.
    scope: Scope | None = None


class Log:
    """The run's log: what certify prints, kept for the bundle (run.log). tee(stream) gives a
    stream that writes to `stream` and to the log; every stream of one Log writes to the same
    text, in order. Not a terminal (the progress is written as lines, as in CI)."""

    def __init__(self) -> None:
        self.parts: list[str] = []

    def tee(self, stream: TextIO) -> TextIO:
        """`stream`, writing what it is given into the log too."""
        return cast(TextIO, _Tee(stream, self.parts))

    def text(self) -> str:
        return "".join(self.parts)


class _Tee:
    def __init__(self, stream: TextIO, parts: list[str]) -> None:
        self.stream, self.parts = stream, parts

    def write(self, text: str) -> int:
        self.parts.append(text)
        return self.stream.write(text)

    def flush(self) -> None:
        self.stream.flush()

    def isatty(self) -> bool:
        return False


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def sums_text(folder: Path) -> str:
    """SHA256SUMS of every file in folder but itself (`sha256sum` format: `sha256sum -c
    SHA256SUMS` checks it too), sorted by name."""
    names = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*")
                   if p.is_file() and p.name != SUMS)
    return "".join(f"{sha256_file(folder / name)}  {name}\n" for name in names)


def _git_state() -> dict[str, Any] | None:
    """The commit and whether the tree differs from it, when the package runs from a git tree;
    None otherwise (an installed wheel)."""
    root = Path(conformance.__file__).resolve().parent.parent
    if not (root / ".git").exists():
        return None

    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True,
                              timeout=30, check=True).stdout

    try:
        commit = git("rev-parse", "HEAD").strip()
        changed = git("status", "--porcelain", "--untracked-files=normal").splitlines()
    except (OSError, subprocess.SubprocessError) as exc:
        return {"tree": str(root), "commit": None, "dirty": None,
                "error": f"git could not tell: {exc}"}
    return {"tree": str(root), "commit": commit, "dirty": bool(changed),
            "changed_files": len(changed)}


def _packages() -> dict[str, str]:
    found = {}
    for name in PACKAGES:
        try:
            found[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return found


def environment(doc: ResultsDocument, backend_environment: dict[str, str],
                git: dict[str, Any] | None) -> dict[str, Any]:
    """environment.json: where and how the run ran (OS, Python, package versions, the
    backend's own environment, the suite and case set, the execution flags and the command)."""
    return {
        "format": ENVIRONMENT_FORMAT,
        "suite_version": doc.suite_version,
        "case_set_sha256": mustpass.committed().case_set_sha256,
        "mustpass_cases": len(doc.results),
        "feature_level": doc.feature_level,
        "execution_flags": doc.execution_flags,
        "command": doc.command,
        "backend": {"name": doc.backend["name"], "class": doc.backend["class"],
                    "environment": backend_environment},
        "os": {"system": platform.system(), "release": platform.release(),
               "version": platform.version(), "machine": platform.machine(),
               "platform": platform.platform()},
        "python": {"version": platform.python_version(),
                   "implementation": platform.python_implementation(),
                   "executable": sys.executable},
        "packages": _packages(),
        "git": git,
        "execution": None if doc.execution is None else doc.execution.to_json(),
        "started_at": doc.started_at,
        "finished_at": doc.finished_at,
    }


def statement_template(doc: ResultsDocument) -> str:
    level = doc.feature_level
    flags = "|".join(doc.execution_flags) or "NONE"
    scope = document_scope(doc)
    verdict = verdict_line(doc.verdict[level], scope=scope) if level in doc.verdict else "?"
    claim = for_scope(scope)
    fill = PLACEHOLDER
    return "\n".join([
        "# Conformance statement",
        "",
        "Fill in every field marked " + f"`{fill} ...>` and sign. A field edited after "
        "`dmlconf certify` changes this file's sha256: give the filled statement to certify "
        "(`--statement FILE`), or replace this file's line in SHA256SUMS "
        "(`sha256sum statement.md`) before handing the bundle over.",
        "",
        f"- **Organisation**: {fill}: the company or group making the claim>",
        f"- **Implementation**: {fill}: the product, driver or library certified>",
        f"- **Version**: {fill}: its version, as the users see it>",
        f"- **Claim**: the implementation run by the backend {backend_title(doc.backend)} "
        f"conforms to DML_FEATURE_LEVEL_{level}{claim} of the "
        f"dml-conformance suite {doc.suite_version} (mustpass list of "
        f"{len(doc.results)} cases), with DML_EXECUTION_FLAGS {flags}. "
        f"This run: {verdict}.",
        f"- **Contact**: {fill}: name and e-mail of who answers questions on this claim>",
        f"- **Signed**: {fill}: name, role, date>",
        "",
    ])


def backend_title(backend: dict[str, Any]) -> str:
    """How a statement names the backend: its own name, then how it was given (--backend) and
    its class, the internal module name of a backend file left out."""
    given = f"`{backend.get('name', '')}`, class `{headline.backend_class(backend)}`"
    name = headline.declared_name(backend)
    return f"`{name}` ({given})" if name else f"{given}"


def _slug(backend: str, class_name: str, name: str = "") -> str:
    """The backend's part of a bundle's name: a registered name, else the name the backend
    gives itself, else its class name."""
    chosen = backend if backend in registered() else name or class_name
    return re.sub(r"[^A-Za-z0-9._-]+", "-", chosen).strip("-.") or "backend"


def _free(folder: Path) -> Path:
    """folder, or folder-2, folder-3 ...: the first name neither a folder nor its .zip has."""
    candidate, n = folder, 1
    while candidate.exists() or _zip_of(candidate).exists():
        n += 1
        candidate = folder.with_name(f"{folder.name}-{n}")
    return candidate


def _zip_of(folder: Path) -> Path:
    return folder.with_name(folder.name + ".zip")


def write_zip(folder: Path) -> Path:
    """FOLDER.zip beside the folder: its files under FOLDER's name, in name order."""
    path = _zip_of(folder)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
        for file in sorted(p for p in folder.rglob("*") if p.is_file()):
            z.write(file, f"{folder.name}/{file.relative_to(folder).as_posix()}")
    os.replace(tmp, path)
    return path


def claimed_level(request: Request) -> FeatureLevel:
    """The level a run of the backend claims: --level, else the backend's highest, as an
    isolated worker reports it (the backend is never built in this process)."""
    if request.level is not None:
        return request.level
    probe = Session(sandboxing(request.without_sandbox, RunOptions(
        backend=request.backend, certify=True, isolate=True,
        execution_flags=request.execution_flags, timeout_s=request.timeout_s,
        memory_cap=request.memory_cap)))
    with probe:
        return probe.start(one_at_a_time=True).claimed_level


def sandboxing(without_sandbox: bool | None, options: RunOptions) -> RunOptions:
    """options with an answer to running without the sandbox, where one is given (None: as
    RunOptions defaults, $DMLCONF_CERTIFY_WITHOUT_SANDBOX)."""
    if without_sandbox is None:
        return options
    return dataclasses.replace(options, certify_without_sandbox=without_sandbox)


def _refuse_taken(out: Path) -> None:
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise CertifyError(f"--out {out} exists and is not an empty folder: give a new one (a "
                           "bundle is never written over another)")
    if _zip_of(out).exists():
        raise CertifyError(f"{_zip_of(out)} exists: give another --out")


def select(session: Session, level: FeatureLevel) -> None:
    """Load the committed cases into the session, check them against the committed case-set
    hash and keep the cases of the level's mustpass list (session.cases). CertifyError when
    the cases are not the committed ones or the level has no list."""
    lists = mustpass.committed()
    if not lists.case_set_sha256:
        raise CertifyError(f"this installation of dml-conformance {__version__} has no "
                           "mustpass lists (mustpass/<version>/): nothing says what a claim "
                           "must cover; reinstall the suite")
    session.select(collect_errors=True)
    where = ", ".join(str(p) for p in session.paths)
    if session.load_errors:
        first = session.load_errors[0]
        raise CertifyError(f"the committed cases in {where} do not load "
                           f"({len(session.load_errors)} problem(s); the first: {first}): a "
                           "certification runs them unchanged; reinstall the suite")
    found = case_set_hash(session.selected)
    if found != lists.case_set_sha256:
        raise CertifyError(
            f"the cases in {where} ({len(session.selected)} cases, case set sha256 {found}) are "
            f"not the committed case set of suite {lists.suite_version} (sha256 "
            f"{lists.case_set_sha256}, named by its mustpass lists): a certification runs the "
            "committed cases unchanged; reinstall the suite or restore cases/")
    ids = lists.lists.get(str(level))
    if ids is None:
        raise CertifyError(f"suite {lists.suite_version} has no mustpass list for feature "
                           f"level {level} (it has {', '.join(sorted(lists.lists))})")
    session.cases = [c for c in session.selected if c.id in ids]
    missing = len(ids) - len(session.cases)
    if missing:  # cannot happen with the hash checked, unless the lists are broken
        raise CertifyError(f"{missing} ids of the mustpass list of {level} name no committed "
                           "case: the lists and the cases disagree; reinstall the suite")


def certify(request: Request, log: Log, out: TextIO,
            summarise: Callable[[ResultsDocument, list[Result], str, Path], None]) -> Path:
    """Run the certification and write its bundle; the bundle folder (its .zip is beside it).
    out: where progress goes (a Log tee: it is part of run.log); summarise(doc, results,
    took, results_path) prints the run's summary (the same as `dmlconf run`'s), naming the
    results file as the bundle will hold it. CertifyError for a refusal;
    KeyboardInterrupt leaves no bundle."""
    if request.out is not None:
        _refuse_taken(request.out)
    if request.statement is not None and not request.statement.is_file():
        raise CertifyError(f"--statement {request.statement}: no such file")
    git = _git_state()  # before anything is written (the bundle may be inside the tree)
    level = claimed_level(request)
    beyond = request.scope.beyond_level(level) if request.scope else []
    if beyond:
        raise CertifyError(f"--scope claims what no case at feature level {level} covers: "
                           f"{'; '.join(beyond)}: claim a higher --level or drop it from "
                           "the scope")
    root = request.out.parent if request.out is not None else DEFAULT_ROOT
    root.mkdir(parents=True, exist_ok=True)
    work = root / f".certify-{os.getpid()}.partial"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    try:
        session = Session(sandboxing(request.without_sandbox, RunOptions(
            backend=request.backend, level=level, execution_flags=request.execution_flags,
            baseline=request.baseline, certify=True, workers=request.workers,
            timeout_s=request.timeout_s, memory_cap=request.memory_cap,
            json=work / RESULTS, scope=request.scope)))
        select(session, level)
        return _run_and_write(session, request, log, out, summarise, git, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _run_and_write(session: Session, request: Request, log: Log, out: TextIO,
                   summarise: Callable[[ResultsDocument, list[Result], str, Path], None],
                   git: dict[str, Any] | None, work: Path) -> Path:
    execution = session.plan()
    started = dt.datetime.now(dt.timezone.utc)
    with session:
        runner = session.start()
        flags = "|".join(execution.execution_flags.names) or "NONE"
        claim = for_scope(request.scope)
        out.write(f"dmlconf {__version__} certify: backend {request.backend} "
                  f"({runner.class_name}), feature level {runner.claimed_level}{claim}: the "
                  f"mustpass list of {len(session.cases)} cases, execution flags {flags}, "
                  f"{execution.workers} isolated worker(s), tamper-proof\n")
        session.run(Progress(len(session.todo), out))
    doc = session.document(request.command)
    session.write(doc)
    slug = _slug(request.backend, runner.class_name, headline.declared_name(doc.backend))
    final = request.out or _free(
        DEFAULT_ROOT / f"{slug}-{runner.claimed_level}-{started.date().isoformat()}")
    summarise(doc, session.results, f"{session.duration_s:.1f} s running", final / RESULTS)
    report.write_reports(doc, {kind: work / name for kind, name in REPORTS.items()})
    if request.baseline:
        shutil.copyfile(request.baseline, work / BASELINE)
    statement = (request.statement.read_text(encoding="utf-8") if request.statement
                 else statement_template(doc))
    (work / STATEMENT).write_text(statement, encoding="utf-8")
    (work / ENVIRONMENT).write_text(
        json.dumps(environment(doc, runner.environment, git), indent=1) + "\n",
        encoding="utf-8")
    out.write(f"bundle: {final}/ and {_zip_of(final)}; check it with: dmlconf verify "
              f"{_zip_of(final)}\n")
    (work / LOG).write_text(log.text(), encoding="utf-8")
    (work / SUMS).write_text(sums_text(work), encoding="utf-8")
    if final.exists():  # an empty folder given as --out (_refuse_taken)
        final.rmdir()
    final.parent.mkdir(parents=True, exist_ok=True)
    os.replace(work, final)
    write_zip(final)
    return final
