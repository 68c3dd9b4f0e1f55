"""[Inference][oneDNN] float32 conv2d returns wrong values when the output width is 1 after a stride > 1 (oneDNN brg_conv_fwd:avx512_core)

Kind: wrong-value
Ask: a fix: keep such convolutions off brg_conv_fwd:avx512_core until oneDNN fixes it.

What happens: A saved nn.Conv2D(1, 2, (3, 2), stride=(1, 3)) run by a CPU predictor (oneDNN on by default) returns 4 of 8 outputs wrong on AVX-512 CPUs, exact integers expected. Right with disable_mkldnn(), float64, ONEDNN_MAX_CPU_ISA=AVX2, or stride_h 2.

Expected: the cross-correlation of paddle.nn.Conv2D.

Mechanism: ONEDNN_VERBOSE names brg_conv_fwd:avx512_core; oneDNN's C API alone is wrong the same way, in the bundled v3.6.2 and in v3.13.2. In jit_brgemm_conv_utils.cpp, ow == 1 keeps is_os_blocking when stride_h == 1 and scales LDA by ext_kw (estimate_brgemm_ur). Likely the family of pytorch/pytorch#169688.
"""
import sys
import tempfile
import numpy as np
import paddle
print("paddle", paddle.__version__)
x = (np.arange(24) % 7 - 3).astype("float32").reshape(2, 1, 4, 3)  # N, C, H, W; small integers: float32 is exact
w = (np.arange(12) % 5 - 2).astype("float32").reshape(2, 1, 3, 2)
conv = paddle.nn.Conv2D(1, 2, (3, 2), stride=(1, 3), bias_attr=False)  # output width (3 - 2) // 3 + 1 = 1
conv.weight.set_value(w)
path = tempfile.mkdtemp() + "/conv"
paddle.jit.save(conv, path, input_spec=[paddle.static.InputSpec([2, 1, 4, 3], "float32")])
config = paddle.inference.Config(path + ".json", path + ".pdiparams")  # CPU: oneDNN is on by default
config.disable_glog_info()
predictor = paddle.inference.create_predictor(config)
predictor.get_input_handle(predictor.get_input_names()[0]).copy_from_cpu(x)
predictor.run()
y = predictor.get_output_handle(predictor.get_output_names()[0]).copy_to_cpu()
expected = sum(np.einsum("nh,o->noh", x[:, 0, i:i + 2, j], w[:, 0, i, j]) for i in range(3) for j in range(2))[..., None]
print("expected", expected.ravel().tolist(), "\nactual  ", y.ravel().tolist())
sys.exit(0 if np.array_equal(y, expected) else 1)
