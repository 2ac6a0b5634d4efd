"""conformance.judge.diagnose on hand-made calls: a failing output is matched against the
catalogue of misreadings, and wrong elements of data movement and nearest selection are traced
back to the input. The wrong outputs here are made independently of the catalogue (index
formulas written out, the reference on a misaddressed read), so a match is evidence, not an
identity."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from conformance import ops
from conformance.judge import diagnose
from conformance.ops import OperatorCall
from conformance.tensors import DataType, TensorDesc, read_tensor, write_tensor

FILL = 0xCD
U32 = DataType.UINT32


def d2s1(order: str, block: int = 2, channels: int = 2, h: int = 2, w: int = 3,
         data_type: DataType = U32, in_strides: tuple[int, ...] | None = None) -> OperatorCall:
    inp = TensorDesc(data_type, (1, channels * block * block, h, w), in_strides)
    out = TensorDesc(data_type, (1, channels, h * block, w * block))
    return ops.get("DEPTH_TO_SPACE1").make_call({"InputTensor": inp, "OutputTensor": out},
                                                 {"BlockSize": block, "Order": order})


def bind(call: OperatorCall, x: np.ndarray) -> dict[str, np.ndarray]:
    desc = call.tensors["InputTensor"]
    buffer = np.full(desc.total_size, 0x5A, dtype=np.uint8)
    write_tensor(desc, buffer, x)
    return {"InputTensor": buffer}


def ramp(call: OperatorCall) -> np.ndarray:
    desc = call.tensors["InputTensor"]
    return np.arange(1, desc.element_count + 1).astype(desc.data_type.numpy_dtype).reshape(
        desc.sizes)


def by_formula(x: np.ndarray, block: int, order: str) -> np.ndarray:
    """DEPTH_TO_SPACE1 written out element by element from the NOTES §3 index formulas."""
    n, c, h, w = x.shape
    cc = c // (block * block)
    y = np.empty((n, cc, h * block, w * block), dtype=x.dtype)
    for i in np.ndindex(*y.shape):
        b, k, r, s = i
        q = (r % block) * block + (s % block)
        channel = q * cc + k if order == "DEPTH_COLUMN_ROW" else k * block * block + q
        y[i] = x[b, channel, r // block, s // block]
    return y


def explain(call: OperatorCall, buffers: dict, got: np.ndarray) -> dict | None:
    spec = ops.get(call.operator)
    x = read_tensor(call.tensors["InputTensor"], buffers["InputTensor"])
    expected = spec.expected(call, {"InputTensor": x})
    return diagnose.explain(call, buffers, FILL, {"OutputTensor": got}, expected)


def test_the_formula_written_out_is_the_reference() -> None:
    """The independent formula the tests build wrong outputs from agrees with the spec."""
    for order in ("DEPTH_COLUMN_ROW", "COLUMN_ROW_DEPTH"):
        call = d2s1(order, block=3)
        x = ramp(call)
        ref = ops.get(call.operator).reference(call, {"InputTensor": x})["OutputTensor"]
        assert np.array_equal(by_formula(x, 3, order), ref)


def test_swapped_orders_are_named() -> None:
    call = d2s1("DEPTH_COLUMN_ROW")
    x = ramp(call)
    got = by_formula(x, 2, "COLUMN_ROW_DEPTH")
    found = explain(call, bind(call, x), got)
    assert found is not None and found["readings"] == ["other-order"], found
    assert found["text"].startswith("the output equals the other Order: DEPTH_COLUMN_ROW and "
                                    "COLUMN_ROW_DEPTH swapped [other-order; contradicts "
                                    "DML_DEPTH_SPACE_ORDER")
    # Data movement: the first wrong element is traced to the input it copied.
    assert "Wrong elements: [0,0,0,1] holds input [0,1,0,0]; expected input [0,2,0,0]" \
        in found["text"], found["text"]


def test_a_right_output_explains_nothing() -> None:
    call = d2s1("COLUMN_ROW_DEPTH", block=3)
    x = ramp(call)
    assert explain(call, bind(call, x), by_formula(x, 3, "COLUMN_ROW_DEPTH")) is None


def test_a_wrong_element_says_where_it_came_from() -> None:
    call = d2s1("DEPTH_COLUMN_ROW")
    x = ramp(call)
    got = by_formula(x, 2, "DEPTH_COLUMN_ROW")
    got[0, 0, 0, 1] = x[0, 1, 0, 0]  # the spec puts input [0,2,0,0] there
    found = explain(call, bind(call, x), got)
    assert found == {"readings": [], "text": "no catalogued misreading matches. Wrong "
                     "elements: [0,0,0,1] holds input [0,1,0,0]; expected input [0,2,0,0]"}


def test_values_found_nowhere_and_unwritten_elements_are_told_apart() -> None:
    call = d2s1("DEPTH_COLUMN_ROW")
    x = ramp(call)
    got = by_formula(x, 2, "DEPTH_COLUMN_ROW")
    got[0, 0, 0, 0] = 999
    got[0, 1, 3, 5] = np.frombuffer(bytes([FILL] * 4), dtype="<u4")[0]
    text = explain(call, bind(call, x), got)["text"]
    assert "[0,0,0,0] holds 999, a value found nowhere in the input; expected input " \
           "[0,0,0,0]" in text, text
    assert "[0,1,3,5] was left unwritten (it still holds the fill byte 0xCD); expected input " \
           "[0,7,1,2]" in text, text


def test_a_value_several_inputs_hold_is_said_so() -> None:
    call = d2s1("DEPTH_COLUMN_ROW")
    x = ramp(call)
    x[0, 5] = x[0, 0]  # channels 0 and 5 hold the same values
    got = by_formula(x, 2, "DEPTH_COLUMN_ROW")
    got[0, 0, 0, 1] = x[0, 0, 0, 0]
    text = explain(call, bind(call, x), got)["text"]
    assert "[0,0,0,1] holds a value 2 inputs hold ([0,0,0,0], [0,5,0,0]); expected input " \
           "[0,2,0,0]" in text, text


def test_a_strided_misreading_is_named() -> None:
    """A padded input read as if packed: the reference run on the packed misread of the
    buffer. strides-ignored names it."""
    sizes = (1, 8, 2, 3)
    padded = (80, 10, 5, 1)  # rows of 3 elements padded to 5
    call = d2s1("DEPTH_COLUMN_ROW", in_strides=padded)
    x = ramp(call)
    buffers = bind(call, x)
    misread = read_tensor(TensorDesc(U32, sizes), buffers["InputTensor"])
    got = by_formula(misread, 2, "DEPTH_COLUMN_ROW")
    found = explain(call, buffers, got)
    assert found is not None and "strides-ignored" in found["readings"], found
    assert "every tensor read and written as packed" in found["text"]


def test_several_matching_readings_are_all_named() -> None:
    """A broadcast input dropped to packed is both 'strides ignored' and 'stride 0 read as
    packed': both are named, the first as 'the output equals', the next as 'it also equals'."""
    call = d2s1("DEPTH_COLUMN_ROW", in_strides=(0, 3, 0, 1))
    x = ramp(call)
    buffers = bind(call, x)
    image = np.zeros(4 * 48, dtype=np.uint8)
    image[:buffers["InputTensor"].size] = buffers["InputTensor"]
    misread = read_tensor(TensorDesc(U32, (1, 8, 2, 3)), image)
    found = explain(call, buffers, by_formula(misread, 2, "DEPTH_COLUMN_ROW"))
    assert {"strides-ignored", "stride-zero-as-packed"} <= set(found["readings"]), found
    assert "; it also equals " in found["text"]


def test_values_through_float32_are_named_for_integers_float32_cannot_hold() -> None:
    call = d2s1("COLUMN_ROW_DEPTH", data_type=DataType.INT32)
    x = (2**24 + 1 + 2 * np.arange(48, dtype=np.int64)).astype(np.int32).reshape(1, 8, 2, 3)
    got = by_formula(x, 2, "COLUMN_ROW_DEPTH").astype(np.float32).astype(np.int32)
    found = explain(call, bind(call, x), got)
    assert found["readings"] == ["through-float32"], found
    assert "a value found nowhere in the input" in found["text"]


def test_a_within_envelope_is_recentred_on_the_reading() -> None:
    """Linear resampling judged within a bound: an output off the spec's values but within the
    same bound of the asymmetric reading (offsets 0 / 0) is named; its wrong elements are not
    traced to a source (computed values have none) but weighed: what each is consistent with."""
    spec = ops.get("RESAMPLE1")
    inp = TensorDesc(DataType.FLOAT32, (1, 1, 3, 4))
    out = TensorDesc(DataType.FLOAT32, (1, 1, 6, 8))
    call = spec.make_call({"InputTensor": inp, "OutputTensor": out},
                          {"InterpolationMode": "LINEAR", "Scales": [1, 1, 2, 2],
                           "InputPixelOffsets": [0.5] * 4, "OutputPixelOffsets": [-0.5] * 4})
    x = np.arange(1, 13, dtype=np.float32).reshape(1, 1, 3, 4)
    asymmetric = replace(call, attributes={**call.attributes, "InputPixelOffsets": (0.0,) * 4,
                                           "OutputPixelOffsets": (0.0,) * 4})
    exp = spec.expected(asymmetric, {"InputTensor": x})["OutputTensor"]
    got = (exp.center + 0.5 * exp.envelope.bound).astype(np.float32)  # inside the bound
    found = explain(call, bind(call, x), got)
    assert found is not None and "asymmetric" in found["readings"], found
    assert "holds input" not in found["text"] and "it is consistent with" in found["text"]


def test_nearest_wrong_elements_are_traced() -> None:
    spec = ops.get("RESAMPLE")
    call = spec.make_call({"InputTensor": TensorDesc(DataType.FLOAT16, (1, 1, 2, 3)),
                           "OutputTensor": TensorDesc(DataType.FLOAT16, (1, 1, 4, 6))},
                          {"InterpolationMode": "NEAREST_NEIGHBOR", "Scales": [1, 1, 2, 2]})
    x = np.arange(1, 7, dtype=np.float16).reshape(1, 1, 2, 3)
    got = np.repeat(np.repeat(x, 2, axis=2), 2, axis=3)  # nearest at 2x is repetition
    got[0, 0, 3, 5] = x[0, 0, 0, 0]
    text = explain(call, bind(call, x), got)["text"]
    assert "[0,0,3,5] holds input [0,0,0,0]; expected input [0,0,1,2]" in text, text


def test_a_rejection_is_matched_to_the_doc_error_reading() -> None:
    spec = ops.get("SPACE_TO_DEPTH1")
    call = spec.make_call({"InputTensor": TensorDesc(U32, (1, 2, 4, 6)),
                           "OutputTensor": TensorDesc(U32, (1, 8, 2, 3))},
                          {"BlockSize": 2, "Order": "DEPTH_COLUMN_ROW"})
    found = diagnose.explain_rejection(call)
    assert found is not None and found["readings"] == ["space-to-depth-output-formula"]
    one = replace(call, attributes={**call.attributes, "BlockSize": 1},
                  tensors={"InputTensor": TensorDesc(U32, (1, 2, 4, 6)),
                           "OutputTensor": TensorDesc(U32, (1, 2, 4, 6))})
    assert diagnose.explain_rejection(one) is None


def test_relation_cases_are_explained_against_the_reference() -> None:
    call = d2s1("DEPTH_COLUMN_ROW", block=3)
    x = ramp(call)
    buffers = bind(call, x)
    got = {"OutputTensor": by_formula(x, 3, "COLUMN_ROW_DEPTH")}
    found = diagnose.explain_by_reference(call, buffers, FILL, got)
    assert found is not None and found["readings"] == ["other-order"]
    right = {"OutputTensor": by_formula(x, 3, "DEPTH_COLUMN_ROW")}
    assert diagnose.explain_by_reference(call, buffers, FILL, right) is None


def test_large_calls_are_not_diagnosed(monkeypatch: pytest.MonkeyPatch) -> None:
    call = d2s1("DEPTH_COLUMN_ROW")
    x = ramp(call)
    monkeypatch.setattr(diagnose, "MAX_ELEMENTS", 10)
    assert explain(call, bind(call, x), by_formula(x, 2, "COLUMN_ROW_DEPTH")) is None



def test_a_nearest_reading_is_named_where_the_envelope_lets_nan_payloads_change() -> None:
    """Nearest is judged with any NaN accepted for a NaN (the legal envelope): a backend that
    takes floor(c) and also canonicalises NaNs is still recognised as nearest-floor."""
    spec = ops.get("RESAMPLE1")
    call = spec.make_call({"InputTensor": TensorDesc(DataType.FLOAT32, (1, 1, 1, 4)),
                           "OutputTensor": TensorDesc(DataType.FLOAT32, (1, 1, 1, 8))},
                          {"InterpolationMode": "NEAREST_NEIGHBOR", "Scales": [1, 1, 1, 2],
                           "InputPixelOffsets": [0.5] * 4, "OutputPixelOffsets": [-0.5] * 4})
    x = np.array([1, 2, 3, 4], dtype=np.float32).reshape(1, 1, 1, 4)
    x.view(np.uint32)[0, 0, 0, 1] = 0x7F80_0001  # a signalling NaN with payload 1
    c = np.clip((np.arange(8) + 0.5) / 2 - 0.5, 0, 3)  # the coordinate, off every tie
    got = x[..., np.floor(c).astype(int)].copy()
    got.view(np.uint32)[np.isnan(got)] = 0x7FC0_0000
    found = explain(call, bind(call, x), got)
    assert found is not None and "nearest-floor" in found["readings"], found
