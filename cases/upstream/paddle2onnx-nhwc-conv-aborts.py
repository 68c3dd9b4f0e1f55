"""paddle.onnx.export aborts the Python process (SIGABRT) on an unsupported conv instead of raising

Kind: crash
Ask: a fix: raise a Python exception (ValueError / NotImplementedError) for unsupported features, so that callers and notebooks survive; exporting NHWC convs with Transposes would remove the first case.

What happens: paddle.onnx.export of nn.Conv2D(3, 4, 3, data_format="NHWC") prints "[OP: pd_op.conv2d] Cannot support input with NHWC format" and "There are unsupported features", then the interpreter dies by SIGABRT: no exception reaches the caller's try/except. The same for NLC/NDHWC convs and conv1d/2d_transpose, and for padding='SAME' with a dilation ("While dilations != 1, cannot support padding = 'SAME'").

Expected: an exception the caller can catch; a Python API should not end the process (paddle.nn.Conv2D raises ValueError for a data_format it does not know).

Mechanism: paddle2onnx's Assert (paddle2onnx/utils/utils.h) prints the message and calls std::abort(); the exporter (paddle2onnx/mapper/exporter.cc) asserts that no mapper reported an unsupported feature. #1027 asked for NHWC export (declined: ONNX is NCHW) and #1356 for SAME with dilations; neither mentions that the process is killed.

Symptoms:
channels-last conv1d/2d/3d and conv1d/2d_transpose: "Cannot support input with NHWC format", then SIGABRT
conv with padding='SAME' and a dilation > 1: "While dilations != 1, cannot support padding = 'SAME'", then SIGABRT
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
