"""ConvTranspose auto_pad SAME_UPPER with a kernel shorter than the stride, followed by another node, through IREE (llvm-cpu)

Measures the length ONNX shape inference gives the ConvTranspose output against L * stride and onnx.reference, and
whether iree-compile accepts the model with a Transpose or a Relu after it, and with the ConvTranspose as graph output.
"""
import importlib.metadata
import sys

import iree.compiler.tools as tools
import iree.runtime as rt
import numpy as np
import onnx
from iree.compiler import ir
from iree.compiler.extras import onnx_importer
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

FLAGS = ["--iree-hal-target-device=local", "--iree-hal-local-target-device-backends=llvm-cpu",
         "--iree-llvmcpu-target-cpu=host"]
print("onnx", onnx.__version__, "| iree-base-compiler", importlib.metadata.version("iree-base-compiler"),
      "| target flags:", " ".join(FLAGS))
rng = np.random.default_rng(0)
L, C_IN, C_OUT, K, S = 2, 2, 3, 1, 3


def model_of(layout, after):
    """ConvTranspose SAME_UPPER, kernel K, strides S; channels-last: Transposes around it; `after`: a node after it."""
    nodes, x_in = [], "x"
    if layout == "NLC":
        nodes.append(helper.make_node("Transpose", ["x"], ["x_ncl"], perm=[0, 2, 1]))
        x_in = "x_ncl"
    last = "z" if layout == "NLC" or after else "y"
    nodes.append(helper.make_node("ConvTranspose", [x_in, "w"], [last], kernel_shape=[K], strides=[S],
                                  auto_pad="SAME_UPPER"))
    if layout == "NLC":
        nodes.append(helper.make_node("Transpose", ["z"], ["y"], perm=[0, 2, 1]))
    elif after:
        nodes.append(helper.make_node(after, ["z"], ["y"]))
    x_shape, y_shape = ([1, L, C_IN], [1, L * S, C_OUT]) if layout == "NLC" else ([1, C_IN, L], [1, C_OUT, L * S])
    w = rng.standard_normal((C_IN, C_OUT, K)).astype(np.float32)
    graph = helper.make_graph(nodes, "main", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, y_shape)],
                              initializer=[numpy_helper.from_array(w, "w")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    onnx.checker.check_model(model)
    return model, x_shape


def import_onnx(inferred):
    """What iree-import-onnx does with the inferred model: torch-mlir's ONNX importer."""
    info = onnx_importer.ModelInfo(inferred)
    module = info.create_module(context=ir.Context()).operation
    onnx_importer.NodeImporter.define_function(info.main_graph, module).import_all()
    module.verify()
    return module.get_asm()


defect = False
for layout, after in [("NLC", None), ("NCL", "Relu"), ("NCL", None)]:
    model, x_shape = model_of(layout, after)
    inferred = onnx.shape_inference.infer_shapes(model, data_prop=True)  # as iree-import-onnx does
    conv_out = "z" if layout == "NLC" or after else "y"
    dims = {v.name: [d.dim_value for d in v.type.tensor_type.shape.dim] for v in inferred.graph.value_info}
    x = rng.standard_normal(x_shape).astype(np.float32)
    label = f"{layout} input {x_shape}, ConvTranspose kernel {K}, strides {S}, SAME_UPPER" + (f", then {after}" if after else "")
    if conv_out in dims:
        reference = ReferenceEvaluator(model).run(None, {"x": x})[0]
        got = dims[conv_out][2]
        print(f"{label}: ONNX shape inference types the ConvTranspose output {dims[conv_out]}: length {got} "
              f"(L*stride = {L * S}; onnx.reference's output length {reference.shape[1 if layout == 'NLC' else 2]})")
        defect |= got != L * S
    else:
        print(f"{label}: the ConvTranspose output is the graph output, typed as declared "
              f"{[d.dim_value for d in inferred.graph.output[0].type.tensor_type.shape.dim]}")
    try:
        vmfb = tools.compile_str(import_onnx(inferred), input_type="auto", extra_args=FLAGS)
        y = rt.load_vm_flatbuffer(vmfb, driver="local-task").main(x).to_host()
    except Exception as exc:  # noqa: BLE001 - the consequence shown in one line
        text = str(exc)
        first = next((ln.split("error:", 1)[1].strip() for ln in text.splitlines() if "error:" in ln),
                     text.strip().splitlines()[0] if text.strip() else type(exc).__name__)
        print(f"  iree-compile refuses it: {first[:160]}")
        defect = True
        continue
    print(f"  iree-compile compiles it: output shape {list(y.shape)}")
sys.exit(1 if defect else 0)
