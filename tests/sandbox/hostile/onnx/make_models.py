#!/usr/bin/env python3
"""Makes the ONNX models of the hostile ONNX bots (tests/sandbox/test_onnx.py),
with onnx's helper API; the files are checked in beside this script, so the
suite needs no `onnx` package. Run again after a change:

    python tests/sandbox/hostile/onnx/make_models.py   (needs `pip install onnx`)

- ``hog.onnx``: ``y = Expand(x, [2**30])``, one float32 input of shape [1]:
  its output is 4 GiB, asked for at run time (the shape depends on no
  constant-folded input, so the session itself loads in a few KB).
- ``tiny.onnx``: ``y = x @ W + b`` with W of shape [4, 3]: a well-formed
  model, to run with ONNX Runtime's default session options.
"""

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = Path(__file__).resolve().parent
OPSET = [helper.make_opsetid("", 17)]


def save(graph, name: str) -> None:
    model = helper.make_model(graph, opset_imports=OPSET, producer_name="cardroom-tests")
    model.ir_version = 8  # readable by every ONNX Runtime since 1.10
    onnx.checker.check_model(model)
    onnx.save(model, HERE / name)


def main() -> None:
    shape = numpy_helper.from_array(np.array([1 << 30], dtype=np.int64), "shape")
    save(helper.make_graph(
        [helper.make_node("Expand", ["x", "shape"], ["y"])], "hog",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1 << 30])], initializer=[shape],
    ), "hog.onnx")  # fmt: skip
    weights = numpy_helper.from_array(np.arange(12, dtype=np.float32).reshape(4, 3) / 10, "W")
    bias = numpy_helper.from_array(np.array([0.5, -0.5, 0.0], dtype=np.float32), "b")
    save(helper.make_graph(
        [helper.make_node("MatMul", ["x", "W"], ["xw"]), helper.make_node("Add", ["xw", "b"], ["y"])], "tiny",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 3])], initializer=[weights, bias],
    ), "tiny.onnx")  # fmt: skip


if __name__ == "__main__":
    main()
