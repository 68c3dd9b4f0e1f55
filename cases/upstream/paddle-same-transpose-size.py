"""conv*_transpose padding='SAME' gives neither the documented length nor TensorFlow's L * stride

Kind: by-design-undocumented
Ask: please document the length and offset SAME gives here, or make it TensorFlow's L * stride.

What happens: F.conv1d_transpose(x, w, stride=2, padding='SAME') on a length-7 input, 3 taps, returns 13 elements (15 less one per end); with output_size=14, 14 elements one position late.

Expected: TensorFlow's SAME (tf.nn.conv1d_transpose) gives L * stride = 14: the full result less its last element. Paddle's docs (https://www.paddlepaddle.org.cn/documentation/docs/zh/api/paddle/nn/functional/conv1d_transpose_cn.html) give (L_in + stride - 1) / stride, the forward conv's length.

Mechanism: ConvTransposeInferMeta (paddle/phi/infermeta/binary.cc) and the kernels pass the input's dims to UpdatePaddingAndDilation (paddle/phi/kernels/cpu/conv_util.h), which pads as a forward SAME conv: pad_sum = max((ceil(L / s) - 1) * s + k - L, 0) = 2, so 15 - 2 = 13, cropped 1 at the start, output_size or not. Met in #15477 and #26603, both closed.

Symptoms:
SAME with L % stride != 0 or kernel < stride: short output (also Paddle Inference)
its gradients
with output_size = L * stride: values one position late
the same, gradients
"""
import sys
import numpy as np
import paddle
import paddle.nn.functional as F
print("paddle", paddle.__version__)
L, s = 7, 2
x = paddle.to_tensor(np.arange(1, L + 1, dtype="float32").reshape(1, 1, L))  # [1, 2, ..., 7]
w = paddle.to_tensor(np.array([1, 10, 100], dtype="float32").reshape(1, 1, 3))  # 3 taps
full = F.conv1d_transpose(x, w, stride=s).numpy().ravel()  # no padding: (7 - 1) * 2 + 3 = 15 elements
start = (len(full) - L * s) // 2  # TensorFlow's SAME keeps L * s = 14 of them, from (15 - 14) // 2 = 0
expected = full[start:start + L * s].tolist()
same = F.conv1d_transpose(x, w, stride=s, padding="SAME").numpy().ravel().tolist()
sized = F.conv1d_transpose(x, w, stride=s, padding="SAME", output_size=L * s).numpy().ravel().tolist()
print(f"TensorFlow's SAME ({len(expected)}):", expected)
print(f"padding='SAME' ({len(same)}):", same)
print(f"padding='SAME', output_size={L * s} ({len(sized)}):", sized)
sys.exit(0 if same == expected and sized == expected else 1)
