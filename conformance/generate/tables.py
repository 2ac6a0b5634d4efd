"""Data-type and dimension-count tables per feature level: for each operator, each of the 11
data types, and each dimension count (1 to 5 for the resample operators; 3, 4 and 5 for the
depth/space operators), a case at the lowest feature level whose table takes it, or a rejected
case where no level does. A type that a table adds at a later level is not required of a backend
claiming less (its case needs that level); a type no table lists must be rejected at every level.

Spec: each operator page's "Tensor support" tables (cited per case by the operator spec).
"""

from __future__ import annotations

from conformance import ops
from conformance.generate.build import ALL_TYPES, case, cite, desc, smooth_input, values_for
from conformance.ops.base import OperatorSpec

FAMILY = "tables"
DESCRIPTION = "each data type and dimension count per operator, valid from its level or rejected"
RESAMPLE_SIZES = (2, 3, 2, 3, 2)  # leading sizes of a 1..5-dimension resample input


def _depth_space(spec: OperatorSpec, dims: int) -> tuple[list[int], list[int], dict]:
    attrs: dict = {"BlockSize": 2}
    if "Order" in {a.name for a in spec.attributes}:
        attrs["Order"] = "DEPTH_COLUMN_ROW"
    depth, space = [1, 4, 2, 3], [1, 1, 4, 6]
    extra = {3: 0, 4: None, 5: 1}[dims]
    if extra is not None:  # a 3-D or 5-D tensor: drop or add a leading dimension
        depth = depth[1:] if dims == 3 else [1, *depth]
        space = space[1:] if dims == 3 else [1, *space]
    return (depth, space, attrs) if spec.name.startswith("DEPTH") else (space, depth, attrs)


def _resample(spec: OperatorSpec, dims: int, mode: str) -> tuple[list[int], list[int], dict]:
    sizes = list(RESAMPLE_SIZES[:dims])
    scales = [1.0] * (dims - 1) + [2.0]
    out = [*sizes[:-1], sizes[-1] * 2]
    attrs: dict = {"InterpolationMode": mode, "Scales": scales}
    if spec.name == "RESAMPLE1":
        attrs["InputPixelOffsets"] = [0.5] * dims
        attrs["OutputPixelOffsets"] = [-0.5] * dims
    return sizes, out, attrs


def files() -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for spec in ops.OPERATORS.values():
        resample = spec.name.startswith("RESAMPLE")
        cases = out.setdefault(spec.name.lower(), [])
        variants = ([(d, m) for d in range(1, 6) for m in ("NEAREST_NEIGHBOR", "LINEAR")]
                    if resample else [(d, None) for d in (3, 4, 5)])
        for dims, mode in variants:
            for data_type in ALL_TYPES:
                inp, outp, attrs = (_resample(spec, dims, mode) if resample
                                    else _depth_space(spec, dims))
                tensors = {"InputTensor": desc(data_type, inp),
                           "OutputTensor": desc(data_type, outp)}
                level = spec.level_for(data_type, dims)
                suffix = f"{dims}d/{mode.lower()}" if mode else f"{dims}d"
                cid = f"generated/tables/{spec.name.lower()}/{suffix}/{data_type.name.lower()}"
                table_cite = [cite(spec.page, "Tensor support")]
                source = (smooth_input if resample and mode == "LINEAR" else values_for)(
                    cid, tensors["InputTensor"])
                if level is None:
                    cases.append(case(
                        cid, spec.name, attrs, tensors, family=FAMILY, spec=table_cite,
                        inputs={"InputTensor": source}, expected="rejected",
                        level=spec.introduced, tags=["rejected"],
                        description=f"{data_type.name} with {dims} dimensions is in no "
                                    f"{spec.name} table at any feature level: must be rejected"))
                else:
                    cases.append(case(
                        cid, spec.name, attrs, tensors, family=FAMILY, spec=table_cite,
                        inputs={"InputTensor": source}, level=max(level, spec.introduced),
                        description=f"{data_type.name} with {dims} dimensions is in the "
                                    f"{spec.name} table from feature level {level}"))
    return out


