"""paddle.onnx.export aborts the Python process (SIGABRT) on an unsupported conv instead of raising

Kind: crash
Ask: a fix: raise a Python exception for unsupported features.

What happens: Exporting nn.Conv2D(3, 4, 3, data_format="NHWC") prints "Cannot support input with NHWC format" and "There are unsupported features", then the interpreter dies by SIGABRT; the caller's try/except never runs.

Expected: an exception the caller can catch.

Mechanism: paddle2onnx's Assert (paddle2onnx/utils/utils.h) prints and calls std::abort(). #1027 and #1356 asked for the features, not about the abort.

Symptoms:
channels-last convs: "Cannot support input with NHWC format", then SIGABRT
padding='SAME' with a dilation: "While dilations != 1, cannot support padding = 'SAME'", then SIGABRT
"""
import tempfile
import paddle
import paddle2onnx
print("paddle", paddle.__version__, "paddle2onnx", paddle2onnx.__version__)
conv = paddle.nn.Conv2D(3, 4, 3, data_format="NHWC")  # ONNX Conv is NCHW: an exporter needs Transposes or must refuse
path = tempfile.mkdtemp() + "/conv"
print("paddle.onnx.export of an NHWC Conv2D:", flush=True)
try:
    paddle.onnx.export(conv, path, input_spec=[paddle.static.InputSpec([1, 8, 8, 3], "float32")])  # SIGABRT here
    print("exported")
except Exception as e:  # what a Python API does with a model it cannot convert
    print("raises:", type(e).__name__, str(e).strip().splitlines()[-1][:200])
