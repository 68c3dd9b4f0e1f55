"""paddle.nn.functional.conv{1,2,3}d_transpose return an empty tensor where the padding crops the whole output
(output length (L-1)*s + d*(k-1) + 1 + output_padding - pad_before - pad_after == 0) instead of raising, as they do
(and as torch's CPU path does) when that length is negative."""
import numpy as np
import paddle
import paddle.nn.functional as F

paddle.set_device("cpu")
print("paddle", paddle.__version__)
for op, size, k, s, pads, kw in [("conv1d_transpose", 11, 1, 3, [15, 16], {}),
                                 ("conv1d_transpose", 11, 1, 3, [15, 16], {"output_size": [0]}),
                                 ("conv1d_transpose", 1, 1, 1, [0, 1], {}),
                                 ("conv2d_transpose", 3, 2, 2, [3, 3, 3, 3], {}),
                                 ("conv3d_transpose", 3, 2, 2, [3] * 6, {}),
                                 ("conv1d_transpose", 11, 1, 3, [16, 16], {})]:
    rank = int(op[4])
    x = paddle.to_tensor(np.ones((1, 1, *[size] * rank), np.float32))
    w = paddle.to_tensor(np.ones((1, 1, *[k] * rank), np.float32))
    length = (size - 1) * s + k - pads[0] - pads[1]
    try:
        result = f"returned shape {tuple(getattr(F, op)(x, w, stride=s, padding=pads, **kw).shape)}"
    except Exception as exc:  # noqa: BLE001
        result = "raised " + str(exc).strip().splitlines()[-1][:90]
    print(f"{op}(input {size}, kernel {k}, stride {s}, padding {pads}{', ' + str(kw) if kw else ''}): "
          f"output length {length} -> {result}")
