"""conv*_transpose refuses output_padding >= stride (and output_size past that) where a dilation makes it valid

Kind: valid-refused
Ask: please accept output_padding < max(stride, dilation), and output_size up to that, as PyTorch does (ConvTransposeInferMeta already allows it), or document the stride-only limit.

What happens: With stride 1 and dilation 2, F.conv1d_transpose(..., output_padding=1) and F.conv2d_transpose(..., output_padding=(0, 1)) raise in the CPU kernel, output_size=6 raises in shape inference, and output_padding=2 (< dilation 3) meets conv1d_transpose's Python check, so paddle.onnx.export cannot export it. Paddle Inference refuses the same.

Expected: output_padding is valid while smaller than stride or dilation (PyTorch: https://pytorch.org/docs/stable/generated/torch.nn.ConvTranspose1d.html): x [1, 2, 3], w [1, 10] give [1, 2, 13, 20, 30, 0] there.

Mechanism: conv1d_transpose (python/paddle/nn/functional/conv.py) checks output_padding <= stride; ConvTransposeInferMeta (paddle/phi/infermeta/binary.cc) allows output_padding < max(stride, dilation) but bounds output_size by inferred + stride; the CPU Col2Im functor (paddle/phi/kernels/funcs/im2col.cc) needs (output + pads - dilated kernel) / stride + 1 == input length, which output_padding >= stride breaks. PR #26921 added the Python check believing PyTorch had it.

Symptoms:
conv1d/2d/3d_transpose with output_padding (eager and Paddle Inference)
conv1d/2d/3d_transpose with output_size
paddle.onnx.export of conv1d_transpose with output_padding > stride
"""
import sys
import paddle
import paddle.nn.functional as F
print("paddle", paddle.__version__)
x, w = paddle.to_tensor([[[1.0, 2.0, 3.0]]]), paddle.to_tensor([[[1.0, 10.0]]])  # length 3; 2 taps, dilation 2
expected = [1.0, 2.0, 13.0, 20.0, 30.0, 0.0]  # (3 - 1) * 1 + 2 * (2 - 1) + 1 = 5, one more for output_padding 1
calls = {"conv1d_transpose(dilation=2, output_padding=1)": lambda: F.conv1d_transpose(x, w, dilation=2, output_padding=1),
         "conv1d_transpose(dilation=2, output_size=6)": lambda: F.conv1d_transpose(x, w, dilation=2, output_size=6),
         "conv2d_transpose(dilation=(1, 2), output_padding=(0, 1))": lambda: F.conv2d_transpose(
             x.unsqueeze(2), w.unsqueeze(2), dilation=(1, 2), output_padding=(0, 1))}
wrong = False
for name, call in calls.items():
    try:
        got = call().numpy().ravel().tolist()
    except Exception as exc:  # the refusal
        got = f"{type(exc).__name__}: {str(exc).split('[Hint')[0].strip().splitlines()[-1][:160]}"
    print(f"{name}: {got}")
    wrong |= got != expected
print("expected (as PyTorch):", expected)
sys.exit(1 if wrong else 0)
