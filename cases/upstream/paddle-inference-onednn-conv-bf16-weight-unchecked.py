"""paddle.inference (oneDNN) runs a conv with a bfloat16 weight on a float32 input, which the dynamic graph refuses

Kind: invalid-accepted
Ask: please make the inference predictor refuse a convolution whose weight dtype differs from its input's, with the error the dynamic graph gives.

What happens: on CPU with paddlepaddle 3.3.1, a Conv3D(4, 2, 2, groups=2) whose weight is bfloat16, saved by paddle.jit.save with a float32 input spec and run by paddle.inference (oneDNN on, the CPU default), returns a float32 output of shape (1, 2, 3, 3, 3) (every value 16.0 for ones). Called in the dynamic graph, the same layer raises "The type of data we are trying to retrieve (float32) does not match the type of data (bfloat16) currently contained in the container". Conv1D and Conv2D alike, both data formats; with a bias, 5 of 6 such models are refused; a float16 or float64 weight is refused ("Ref tensor type (float16) is not supported by oneDNN").

Expected: the error the dynamic graph gives for the same layer and input: a saved model should not run a convolution its layer refuses, and paddle.inference refuses the float16 and float64 weights already.

Mechanism: not located beyond this: the oneDNN conv kernel (paddle/phi/kernels/onednn/conv_kernel.cc) reorders the weight to the primitive's data type, and oneDNN's reorder takes bfloat16 (not float16), so no check fires.
"""
import sys
import tempfile
import numpy as np
import paddle
print("paddle", paddle.__version__)
net = paddle.nn.Conv3D(4, 2, 2, groups=2, bias_attr=False, weight_attr=paddle.nn.initializer.Constant(1.0))
net.to(dtype="bfloat16")  # a bfloat16 weight; the model's input is float32
x, path = np.ones((1, 4, 4, 4, 4), np.float32), tempfile.mkdtemp() + "/model"
paddle.jit.save(net, path, input_spec=[paddle.static.InputSpec(x.shape, "float32", name="x")])
config = paddle.inference.Config(path + ".json", path + ".pdiparams")
config.disable_gpu()  # oneDNN on, the CPU default
try:
    predictor = paddle.inference.create_predictor(config)
    predictor.get_input_handle("x").copy_from_cpu(x)
    predictor.run()
except Exception as exc:  # the refusal a float32 input with a bfloat16 weight should get
    sys.exit(print("paddle.inference refuses:", str(exc).strip().splitlines()[0][:100]))
y = predictor.get_output_handle(predictor.get_output_names()[0]).copy_to_cpu()
print(f"paddle.inference, float32 input, bfloat16 weight: returns {y.dtype} of shape {y.shape}, first value {y.flat[0]}")
sys.exit(1)
