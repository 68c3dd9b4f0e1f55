"""padding='SAME' silently drops the dilation in conv and conv_transpose: please document it or warn

Kind: by-design-undocumented
Ask: a sentence in the conv docs that padding='SAME' ignores the dilation, or a warning.

What happens: F.conv1d(x, w, padding='SAME', dilation=2) returns the undilated F.conv1d(x, w, padding='SAME'); the same padding written out gives the dilated result. No error or warning.

Expected: SAME pads for the dilated kernel, as tf.nn.convolution, torch and ONNX do; Paddle's docs call 'SAME' only "the padding algorithm".

Mechanism: UpdatePaddingAndDilation (paddle/phi/kernels/cpu/conv_util.h) sets every dilation to 1 under "SAME", on purpose. Paddle-TRT (PR #38999) and Paddle2ONNX (#1356) handle the pair apart.

Symptoms:
conv1d/2d/3d and their transposes, with or without output_size
their input and weight gradients
Paddle Inference (with oneDNN some such models with a bias are refused first)
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
