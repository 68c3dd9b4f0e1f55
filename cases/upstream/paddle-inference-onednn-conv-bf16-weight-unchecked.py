"""paddle.inference (oneDNN) runs a conv with a bfloat16 or int8 weight on a float32 input, which the dynamic graph refuses

Kind: invalid-accepted
Ask: please make the inference predictor refuse a convolution whose weight dtype differs from its input's, with the error the dynamic graph gives.

What happens: on CPU with paddlepaddle 3.3.1, a Conv3D(4, 2, 2, groups=2) whose weight is bfloat16 or int8, saved by paddle.jit.save with a float32 input spec and run by paddle.inference (oneDNN on, the CPU default), returns a float32 output of shape (1, 2, 3, 3, 3) (int8 values taken as floats). The dynamic graph raises "The type of data ... (float32) does not match the type of data (bfloat16)". Conv1D and Conv2D alike; with a bias, 4 of 6 are refused. Weights of the other dtypes are refused ("Ref tensor type (float16) is not supported by oneDNN").

Expected: the dynamic graph's error: a saved model should not run a convolution its layer refuses.

Mechanism: not located beyond this: the oneDNN conv kernel (paddle/phi/kernels/onednn/conv_kernel.cc) reorders the weight to the primitive's data type, and oneDNN's reorder takes bfloat16 and int8 (not float16), so no check fires.

Symptoms:
A bfloat16 or int8 weight, float32 input: Conv1D/2D/3D.
A uint8 or int8 input to a float32 Conv1D or Conv2D without a bias.
"""
import tempfile

import numpy as np
import paddle

print("paddle", paddle.__version__)
x, accepted = np.ones((1, 4, 4, 4, 4), np.float32), 0  # ones: every output is 16
for dtype in ("bfloat16", "int8"):  # the weight's dtype; the model's input is float32
    paddle.jit.save(paddle.nn.Conv3D(4, 2, 2, groups=2, bias_attr=False, weight_attr=paddle.nn.initializer.Constant(1.0)).to(dtype=dtype), path := tempfile.mkdtemp() + "/model", input_spec=[paddle.static.InputSpec(x.shape, "float32", name="x")])
    try:  # on CPU, oneDNN on (the default)
        predictor = paddle.inference.create_predictor(paddle.inference.Config(path + ".json", path + ".pdiparams"))
        predictor.get_input_handle("x").copy_from_cpu(x)
        predictor.run()
    except Exception as exc:  # noqa: BLE001 - the refusal a float32 input with such a weight should get
        print(f"{dtype} weight: paddle.inference refuses:", str(exc).strip().splitlines()[0][:100])
    else:
        y = predictor.get_output_handle(predictor.get_output_names()[0]).copy_to_cpu()
        print(f"float32 input, {dtype} weight: paddle.inference returns {y.dtype} of shape {y.shape}, first value {y.flat[0]}")
        accepted += 1
raise SystemExit(1 if accepted else 0)
