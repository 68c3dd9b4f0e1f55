"""[Shape inference] ConvTranspose auto_pad SAME_UPPER with a kernel shorter than the stride: inferred length (L-1)*stride + k, not L*stride

Project: onnx/onnx (https://github.com/onnx/onnx/issues)
Upstream: none found
Related: https://github.com/onnx/onnx/issues/3153 (ConvTranspose SAME means output = input * stride); https://github.com/onnx/onnx/pull/3893 (introduced total_pad = effective_kernel - stride in this inference); https://github.com/iree-org/iree/issues/18270 (the same kind of tensor.cast failure when ONNX's inferred shape and torch-mlir's disagree, for MaxPool)
Checked: 2026-11-28, onnx 1.17.0, iree-base-compiler 3.13.0 / iree-base-runtime 3.13.0; searched onnx/onnx, llvm/torch-mlir and iree-org/iree issues for "ConvTranspose shape inference SAME_UPPER kernel smaller than stride", "ConvTranspose auto_pad inferred shape", "tensor.cast cast incompatible ConvTranspose"

What happens: for a ConvTranspose with auto_pad SAME_UPPER (or SAME_LOWER), onnx.shape_inference.infer_shapes gives the output length (L-1)*stride + (k-1)*dilation + 1 whenever that is shorter than L*stride, i.e. whenever the dilated kernel is shorter than the stride: input length 2, kernel 1, strides 3 is inferred as 4, while the operator's definition ("pad the input so that output_shape[i] = input_shape[i] * strides[i]") and the ONNX reference implementation give 6 (input 5: 13 against 15). A consumer that trusts the inferred type breaks: iree-import-onnx types every intermediate value from this inference, and iree-compile (torch-mlir's lowering computes L*stride) then refuses a model where another node follows the ConvTranspose: "'tensor.cast' op operand type 'tensor<1x4x3xf32>' and result type 'tensor<1x6x3xf32>' are cast incompatible" for the Transpose back to NLC of a channels-last model, and the same for a Relu after it. Where the ConvTranspose output is the graph output with its declared shape, the model compiles. Measured with 1-D, 2-D and 3-D channels-last models (input 1x1 to 2x2, strides 3 to 5, kernels 1 and 2, dilation 2), float32, float16, bfloat16, float64, grouped, and NCHW models followed by Relu or Mul.

Expected: the inferred length L*stride for SAME_UPPER/SAME_LOWER, as the operator text says and as onnx.reference computes: the total padding stride*(L-1) + output_padding + (k-1)*dilation + 1 - L*stride is then negative (here -2), which the operator's pad formulas allow. The script compares the inferred shape with L*stride and with onnx.reference's output.

Mechanism: onnx/defs/nn/defs.cc, convTransposeShapeInference: for auto_pad other than VALID without pads, total_pad = effective_kernel_shape[i] - strides[i], then clamped to 0 ("if (total_pad < 0) total_pad = 0"; std::max(total_pad, 0) on onnx main, 2026-08-22), and the length stride*(L-1) + output_padding + effective_kernel - total_pad. The clamp turns every total padding below 0 into 0, so the inferred length is the full transposed convolution, not L*stride. In IREE, torch-mlir's ConvTranspose conversion (lib/Conversion/TorchOnnxToTorch/DefaultDomainAtoF.cpp, auto_pad branch) computes the padding from L*stride itself (-1 per side here), the lowered convolution is cast to the node's inferred type, and the node after it carries the graph output's declared type: the two static types disagree.

Host: any
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
