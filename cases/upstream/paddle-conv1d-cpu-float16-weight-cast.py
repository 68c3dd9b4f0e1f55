"""F.conv1d on CPU silently casts a float16 weight to a float32 input and returns float16, undocumented, where F.conv2d raises

Kind: by-design-undocumented
Ask: please document in F.conv1d (and nn.Conv1D) that on CPU a float16 weight or bias is cast to the input's dtype and the result is returned in float16, or raise the dtype mismatch as F.conv2d does.

What happens: on CPU with paddlepaddle 3.3.1, F.conv1d with a float32 input (1, 4, 4), a float16 weight (2, 2, 2) and groups=2 returns a float16 tensor of shape (1, 2, 3); a float64 input alike. F.conv2d, F.conv3d and F.conv1d_transpose with the same dtypes raise "The type of data we are trying to retrieve (float32) does not match the type of data (float16)", and a bfloat16 weight makes F.conv1d raise too.

Expected: the error the other convolutions give, or documentation: the F.conv1d page (https://www.paddlepaddle.org.cn/documentation/docs/en/api/paddle/nn/functional/conv1d_en.html) says nothing of the cast or the result's dtype.

Mechanism: python/paddle/nn/functional/conv.py, conv1d (paddlepaddle 3.3.1): on a CPU device a float16 weight or bias is cast with astype(x.dtype) ("cpu not support float16, need to convert dtype") and the output cast back to float16, added by PR #73535.
"""
import sys

import numpy as np
import paddle
import paddle.nn.functional as F

print("paddle", paddle.__version__)
paddle.set_device("cpu")
x, w = paddle.to_tensor(np.ones((1, 4, 4), np.float32)), paddle.ones([2, 2, 2], dtype="float16")
y = F.conv1d(x, w, groups=2)
print(f"F.conv1d, float32 input, float16 weight: returns {y.dtype} of shape {tuple(y.shape)}")
try:
    F.conv2d(x.unsqueeze(2), w.unsqueeze(2), groups=2)
    print("F.conv2d, the same dtypes: returns a result")
except ValueError as exc:  # the mismatch error
    print(f"F.conv2d, the same dtypes: raises {str(exc).strip().splitlines()[0][:110]}")
sys.exit(1 if y.dtype == paddle.float16 else 0)
