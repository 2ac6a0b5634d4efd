"""The checker fuzz's seeds and what it knows of the .expect format (conformance/export/
expectfile.py, dmlconf_vectors.c): where each integer field and tensor of a file lies (layout),
the seed corpus (load_corpus: real exported files, one folder each) and how it is made from an
export of the committed suite (make_corpus: the smallest file of each kind)."""

from __future__ import annotations

import json
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

#: conformance/export/c: the checker's sources.
C_FOLDER = Path(__file__).resolve().parents[1]
ROOT = C_FOLDER.parents[2]
#: The committed seed corpus (in the source tree; an installed package makes one, --make-corpus).
CORPUS = ROOT / "tests" / "export" / "checker_corpus"
MAGIC = b"DMLCEXP2"
#: DML_TENSOR_DATA_TYPE -> (name, element size), as the reader knows them.
DATA_TYPES = {1: ("float32", 4), 2: ("float16", 2), 3: ("uint32", 4), 4: ("uint16", 2),
              5: ("uint8", 1), 6: ("int32", 4), 7: ("int16", 2), 8: ("int8", 1),
              9: ("float64", 8), 10: ("uint64", 8), 11: ("int64", 8)}
#: The buffer files of a seed folder, in the order the command line takes them.
BUFFER_NAMES = ("output.bin", "left.bin", "right.bin")


# -- the .expect format: where its integer fields are -----------------------------------------
@dataclass(frozen=True)
class Field:
    """An integer field of an .expect file: its name, byte offset and width (4 or 8)."""

    name: str
    offset: int
    width: int


@dataclass(frozen=True)
class TensorAt:
    """Where a tensor's fields are in an .expect file."""

    side: str
    element_size: int
    dimension_count: int
    total: int    # offset of TotalTensorSizeInBytes (u64)
    sizes: int    # offset of Sizes[0] (u32 each)
    strides: int  # offset of strides[0] (u32 each)


@dataclass(frozen=True)
class Layout:
    """The integer fields and tensors of an .expect file, as far as it reads (complete: the
    whole file, every byte accounted for); a relation's take axis, if any."""

    fields: tuple[Field, ...] = ()
    tensors: tuple[TensorAt, ...] = ()
    take_axis: int | None = None
    complete: bool = False


class _EndError(Exception):
    """The walk of an .expect file stops."""


def layout(data: bytes) -> Layout:
    """Walk an .expect file as the reader does (dmlconf_vectors.c, conformance/export/
    expectfile.py), recording where each integer field is; stop where it stops making sense."""
    fields: list[Field] = []
    tensors: list[TensorAt] = []
    pos = len(MAGIC)
    take_axis = None

    def number(name: str, width: int) -> int:
        nonlocal pos
        if pos + width > len(data):
            raise _EndError
        fields.append(Field(name, pos, width))
        pos += width
        return int.from_bytes(data[pos - width:pos], "little")

    def skip(count: int) -> None:
        nonlocal pos
        if count > len(data) - pos:
            raise _EndError
        pos += count

    def tensor(side: str) -> tuple[int, int]:
        data_type = number(f"{side}.data_type", 4)
        dimensions = number(f"{side}.dimension_count", 4)
        total = pos
        number(f"{side}.total_size", 8)
        if data_type not in DATA_TYPES or not 1 <= dimensions <= 8:
            raise _EndError
        sizes = pos
        count = 1
        for d in range(dimensions):
            count *= number(f"{side}.sizes[{d}]", 4)
        strides = pos
        for d in range(dimensions):
            number(f"{side}.strides[{d}]", 4)
        size = DATA_TYPES[data_type][1]
        tensors.append(TensorAt(side, size, dimensions, total, sizes, strides))
        return size, count

    complete = False
    try:
        if data[:len(MAGIC)] != MAGIC:
            raise _EndError
        what = number("what", 4)
        skip(number("name length", 4))
        size, count = tensor("left" if what == 2 else "output")
        if what == 2:
            tensor("right")
            axis = number("take axis", 4)
            take_axis = axis if axis < 8 else None
            indices = number("take count", 4)
            for k in range(indices):
                if k < 8:
                    number(f"take[{k}]", 4)
                else:
                    skip(4)
        skip(number("fill count", 4))

        def models(prefix: str) -> None:
            for m in range(min(number(f"{prefix}model count", 4), 2)):
                kind = number(f"{prefix}model{m}.kind", 4)
                number(f"{prefix}model{m}.any_nan", 4)
                skip(number(f"{prefix}model{m}.rule length", 4))
                skip(number(f"{prefix}model{m}.arrays", 4) * count * size)
                if kind == 2:
                    for name, width in (("centers", 8), ("bounds", 8), ("nan_ok", 1)):
                        skip(number(f"{prefix}model{m}.{name} count", 8) * width)

        models("")
        for r in range(min(number("reading count", 4), 16)):
            models(f"reading{r}.")
        complete = pos == len(data)
    except _EndError:
        pass
    return Layout(tuple(fields), tuple(tensors), take_axis, complete)


# -- the corpus -------------------------------------------------------------------------------
@dataclass
class Seed:
    """One real exported .expect and the buffer(s) its command line judges."""

    name: str
    expect: bytes
    buffers: tuple[bytes, ...]
    paths: tuple[Path, ...]  # the buffers' files, passed as they are when not mutated
    layout: Layout


def load_corpus(folder: Path) -> list[Seed]:
    """The seeds of a corpus folder: one subfolder each, holding one .expect and output.bin
    (an output's) or left.bin and right.bin (a relation's)."""
    seeds = []
    for sub in sorted(p for p in Path(folder).iterdir() if p.is_dir()):
        expects = sorted(sub.glob("*.expect"))
        paths = tuple(sub / n for n in BUFFER_NAMES if (sub / n).is_file())
        if len(expects) != 1 or not paths:
            raise ValueError(f"{sub}: a seed holds one .expect and output.bin, or left.bin "
                             "and right.bin")
        expect = expects[0].read_bytes()
        seeds.append(Seed(sub.name, expect, tuple(p.read_bytes() for p in paths), paths,
                          layout(expect)))
    if not seeds:
        raise ValueError(f"{folder}: no seeds")
    return seeds


def _seed_class(expect: bytes) -> str:
    """The kind of file an .expect is, as a folder name: output or relation, data type, the
    models (kind, any NaN, NaN allowed), a take, padding."""
    fields = {f.name: f for f in layout(expect).fields}

    def value(name: str) -> int:
        f = fields[name]
        return int.from_bytes(expect[f.offset:f.offset + f.width], "little")

    side = "left" if value("what") == 2 else "output"
    data_type, size = DATA_TYPES[value(f"{side}.data_type")]
    count = 1
    for d in range(value(f"{side}.dimension_count")):
        count *= value(f"{side}.sizes[{d}]")
    words = ["relation" if side == "left" else "output", data_type]
    for m in range(value("model count")):
        kind = ("exact", "one_of", "within")[value(f"model{m}.kind")]
        if value(f"model{m}.any_nan"):
            kind += "_any_nan"
        if kind == "within" and value(f"model{m}.nan_ok count"):
            kind += "_nan_ok"
        words.append(kind)
    if fields.get("reading count") and value("reading count"):
        words.append("readings")
    if side == "left" and fields.get("take count") and value("take count"):
        words.append("take")
    if value(f"{side}.total_size") > count * size:
        words.append("padded")
    return "-".join(words)


def make_corpus(out: Path, vectors: Path | None = None) -> list[str]:
    """Keep, of each kind of file (_seed_class) of an export, the smallest (.expect and
    buffers together), into out (emptied first): the seed corpus. vectors: an export folder
    (default: the committed suite, exported here). Returns the seeds' names."""
    with tempfile.TemporaryDirectory() as tmp:
        if vectors is None:
            from conformance import suite
            from conformance.casefile import load_cases
            from conformance.export import export

            vectors = Path(tmp) / "vectors"
            export(load_cases([suite.cases_root()]), vectors,
                   {"case_paths": [], "patterns": [], "feature_level": None},
                   {"case_set_sha256": suite.case_set_sha256()})
        return _choose_seeds(Path(vectors), Path(out))


def _choose_seeds(vectors: Path, out: Path) -> list[str]:
    index = json.loads((vectors / "index.json").read_text(encoding="utf-8"))
    chosen: dict[str, tuple[int, str, Path, list[Path]]] = {}
    for entry in index["cases"]:
        folder = vectors / entry["folder"]
        doc = json.loads((folder / "case.json").read_text(encoding="utf-8"))
        pairs = [(o["expect"], [o["reference"]]) for call in doc["calls"]
                 for o in call.get("outputs", {}).values() if o["expect"]]
        pairs += [(r["expect"], [r["left_reference"], r["right_reference"]])
                  for r in doc.get("relations", [])]
        for expect, buffers in pairs:
            files = [folder / expect, *(folder / b for b in buffers)]
            size = sum(f.stat().st_size for f in files)
            kind = _seed_class(files[0].read_bytes())
            origin = f"{entry['id']}/{expect}"
            if kind not in chosen or (size, origin) < chosen[kind][:2]:
                chosen[kind] = (size, origin, files[0], files[1:])
    if out.exists():
        shutil.rmtree(out)
    suite = index["suite"]
    for kind, (_, origin, expect_file, buffer_files) in sorted(chosen.items()):
        seed = out / kind
        seed.mkdir(parents=True)
        shutil.copyfile(expect_file, seed / "check.expect")
        names = BUFFER_NAMES[:1] if len(buffer_files) == 1 else BUFFER_NAMES[1:]
        for name, path in zip(names, buffer_files, strict=True):
            shutil.copyfile(path, seed / name)
        (seed / "origin.txt").write_text(
            f"{origin} ({', '.join(p.name for p in buffer_files)}): dmlconf export of suite "
            f"{suite['version']}, case set {suite['case_set_sha256'][:16]}\n", encoding="utf-8")
    return sorted(chosen)
