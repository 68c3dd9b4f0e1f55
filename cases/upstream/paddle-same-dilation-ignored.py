"""padding='SAME' silently drops the dilation in conv and conv_transpose: please document it or warn

Kind: by-design-undocumented
Ask: a sentence in the conv and conv_transpose docs that padding='SAME' computes the undilated convolution, or a warning (or an error) when it meets a dilation > 1.

What happens: F.conv1d(x, w, padding='SAME', dilation=2) on a length-7 input with a 3-tap kernel returns exactly the undilated F.conv1d(x, w, padding='SAME', dilation=1), [210, 321, 432, 543, 654, 765, 76], where the SAME padding written out (padding=[2, 2], dilation=2) gives [310, 420, 531, 642, 753, 64, 75]. No error or warning.

Expected: SAME pads for the dilated kernel, d * (k - 1) + 1 taps wide, and keeps the taps d apart: tf.nn.convolution (https://www.tensorflow.org/api_docs/python/tf/nn/convolution), torch padding='same' and ONNX auto_pad SAME_UPPER do. Paddle's docs describe 'SAME' only as "the padding algorithm" (https://www.paddlepaddle.org.cn/documentation/docs/en/api/paddle/nn/functional/conv1d_en.html).

Mechanism: UpdatePaddingAndDilation (paddle/phi/kernels/cpu/conv_util.h) sets every dilation to 1 under "SAME", on purpose; the conv, conv_transpose and gradient kernels and the oneDNN conv handler call it. Paddle-TRT keeps SAME with a dilation off TensorRT (PR #36474) and resets it in its converter (PR #38999); Paddle2ONNX refuses the combination (Paddle2ONNX#1356).

Symptoms:
conv1d/2d/3d and conv1d/2d/3d_transpose with padding='SAME' and a dilation > 1: the undilated result
their input and weight gradients: the undilated convolution's
conv*d_transpose with padding='SAME' and output_size: the same
Paddle Inference: the same; with oneDNN, some such models with a bias are refused before they run
"""
import sys
import numpy as np
import paddle
import paddle.nn.functional as F
print("paddle", paddle.__version__)
x = paddle.to_tensor(np.arange(1, 8, dtype="float32").reshape(1, 1, 7))  # length 7
w = paddle.to_tensor(np.array([1, 10, 100], dtype="float32").reshape(1, 1, 3))  # 3 taps, dilation 2: spans 5
same = F.conv1d(x, w, padding="SAME", dilation=2)
explicit = F.conv1d(x, w, padding=[2, 2], dilation=2)  # SAME for a span of 5 at stride 1: 2 before, 2 after
undilated = F.conv1d(x, w, padding="SAME", dilation=1)
print("padding='SAME', dilation=2:", same.numpy().ravel().tolist())
print("padding=[2, 2], dilation=2:", explicit.numpy().ravel().tolist())
print("padding='SAME', dilation=1:", undilated.numpy().ravel().tolist())
sys.exit(0 if np.array_equal(same.numpy(), explicit.numpy()) else 1)
