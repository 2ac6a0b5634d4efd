"""The deep tier: 50,000 and more generated cases beyond the committed suite (docs/families.md,
"Deep tier"), written deterministically into a cache folder on first use, never committed, and
verified by hash on every later use.

A family module takes part by defining deep_files() -> {stem: builder}, each builder returning
that file's case dicts (ids deep/<family>/...), built with the family's own builders; this
module asks every family module (conformance.generate.family_modules()) and names none.

The cache folder is deep/<suite version>/ in the suite's cache folder (casefile.cache.root()).
It holds <family>/<stem>-<k>.yaml (at most FILE_CASES cases a file) and manifest.json: the
sha256 of every file, the sha256 of the whole set (over the sorted "path sha256" lines) and
the fingerprint of the generator (the source of conformance/generate/ and conformance/ops/,
which decide every case), so that an edited, missing or extra file, an interrupted generation
(the manifest is written last) or a cache made by other generator code is found and
regenerated.

Every deep case carries the tag TAG. None is in the mustpass lists (those are made from the
committed cases under cases/ only); a run of the tier judges each case as any other, so a deep
case that fails is a failure of the run and, being mandatory by the verdict's rule, denies its
level, while passing the tier alone never makes a level conformant (the mustpass lists are not
covered): docs/families.md says why.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable
from pathlib import Path
from types import ModuleType

from conformance import __version__
from conformance.casefile import cache
from conformance.generate import HEADER, family_modules
from conformance.generate.emit import dump

TIER = "deep"
TAG = "tier-deep"
#: Cases per file: files small enough to load in parallel and to page through.
FILE_CASES = 1000
MANIFEST = "manifest.json"
_ROOT = Path(__file__).resolve().parents[1]
#: The sources whose every byte may change a deep case: the generators and the operator specs.
GENERATOR_SOURCES = ("generate", "ops")


def cache_folder() -> Path:
    """deep/<suite version> in the suite's cache folder (casefile.cache.root(): DMLCONF_CACHE
    or ~/.cache/dml-conformance), beside the parse cache."""
    return cache.root() / TIER / __version__


def deep_modules() -> list[ModuleType]:
    """The family modules that take part in the tier."""
    return [m for m in family_modules() if hasattr(m, "deep_files")]


def builders() -> dict[str, tuple[ModuleType, Callable[[], list[dict]]]]:
    """<family>/<stem> -> (family module, the builder of its cases), in order."""
    out: dict[str, tuple[ModuleType, Callable[[], list[dict]]]] = {}
    for module in deep_modules():
        for stem, build in module.deep_files().items():
            key = f"{module.FAMILY}/{stem}"
            if key in out:
                raise RuntimeError(f"{module.__name__} and {out[key][0].__name__} both write "
                                   f"the deep tier's {key}")
            out[key] = (module, build)
    return out


def render(keys: Iterable[str] | None = None) -> Iterable[tuple[str, str, int]]:
    """(relative path, text, number of cases) of each file of the tier, or of the <family>/<stem>
    keys given (a slice), in order; each case tagged TAG after its family tag."""
    table = builders()
    for key in (table if keys is None else keys):
        module, build = table[key]
        cases = build()
        for c in cases:
            if not c["id"].startswith(f"{TIER}/{module.FAMILY}/"):
                raise RuntimeError(f"{module.__name__}: deep case id {c['id']!r} is not under "
                                   f"{TIER}/{module.FAMILY}/")
            c["tags"].insert(1, TAG)
        header = HEADER.format(path=module.__name__.replace(".", "/") + ".py",
                               family=module.FAMILY,
                               description=f"{module.DESCRIPTION} (the deep tier)")
        for k in range(0, len(cases), FILE_CASES):
            chunk = cases[k:k + FILE_CASES]
            yield f"{key}-{k // FILE_CASES:03d}.yaml", header + dump({"cases": chunk}), len(chunk)


def fingerprint() -> str:
    """sha256 of the generator's sources (conformance/generate/, conformance/ops/): a cache made
    by other code is stale even where its files match its manifest."""
    h = hashlib.sha256()
    for folder in GENERATOR_SOURCES:
        for path in sorted((_ROOT / folder).rglob("*.py")):
            h.update(path.relative_to(_ROOT).as_posix().encode() + b"\0")
            h.update(path.read_bytes() + b"\0")
    return h.hexdigest()


def set_hash(files: dict[str, str]) -> str:
    """The sha256 of the whole set: of the sorted 'path sha256' lines."""
    return hashlib.sha256("".join(f"{p} {s}\n" for p, s in sorted(files.items())).encode()
                          ).hexdigest()


def write(folder: str | Path, keys: Iterable[str] | None = None,
          progress: Callable[[str], None] | None = None) -> dict:
    """Generate the tier (or the keys given) into folder, replacing what was there, and write
    its manifest last. Returns the manifest."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / MANIFEST).unlink(missing_ok=True)  # no manifest: an unfinished generation
    for old in folder.rglob("*.yaml"):
        old.unlink()
    keys = list(builders() if keys is None else keys)
    files: dict[str, str] = {}
    count = 0
    for i, key in enumerate(keys, 1):
        for rel, text, n in render([key]):
            path = folder / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            data = text.encode("utf-8")
            path.write_bytes(data)
            files[rel] = hashlib.sha256(data).hexdigest()
            count += n
        if progress:
            progress(f"deep tier: {i}/{len(keys)} slices, {count} cases ({key})")
    manifest = {"suite_version": __version__, "tier": TIER, "generator": fingerprint(),
                "cases": count, "set_sha256": set_hash(files), "files": files}
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n",
                                   encoding="utf-8")
    return manifest


def problems(folder: str | Path, whole: bool = True) -> list[str]:
    """Why the cache folder is not a faithful copy of the tier (none: it is): no or an unreadable
    manifest, another suite version or generator, a file missing, edited or extra, a set hash
    that does not match its files. whole: also a manifest of a slice (not every file) is stale."""
    folder = Path(folder)
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        files: dict[str, str] = manifest["files"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return [f"no readable {MANIFEST} in {folder} ({exc.__class__.__name__}): never generated, "
                "or the generation was interrupted"]
    bad = []
    if manifest.get("suite_version") != __version__:
        bad.append(f"made for suite {manifest.get('suite_version')}, this is {__version__}")
    if manifest.get("generator") != fingerprint():
        bad.append("made by other generator code (conformance/generate/ or conformance/ops/ "
                   "changed since)")
    if manifest.get("set_sha256") != set_hash(files):
        bad.append("the manifest's set sha256 does not match its own file list")
    if whole and {k.rsplit("-", 1)[0] for k in files} != set(builders()):
        bad.append("the manifest lists another set of files than the tier has")
    for rel, digest in sorted(files.items()):
        path = folder / rel
        if not path.is_file():
            bad.append(f"{rel} is missing")
        elif hashlib.sha256(path.read_bytes()).hexdigest() != digest:
            bad.append(f"{rel} was changed (its sha256 is not the manifest's)")
    extra = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*.yaml"))
    bad += [f"{rel} is not in the manifest" for rel in extra if rel not in files]
    return bad


def ensure(folder: str | Path | None = None,
           say: Callable[[str], None] = lambda text: None) -> Path:
    """The cache folder holding a verified tier: generated on first use, regenerated (saying
    why) when problems() finds any. say: where progress and reasons go."""
    folder = Path(folder) if folder is not None else cache_folder()
    found = problems(folder)
    if not found:
        return folder
    if (folder / MANIFEST).exists():
        say(f"the deep tier's cache {folder} is stale or tampered with; regenerating:\n  "
            + "\n  ".join(found[:10]) + (f"\n  ... {len(found) - 10} more" if len(found) > 10
                                         else ""))
    else:
        say(f"generating the deep tier into {folder} (first use)")
    write(folder, progress=say)
    return folder
