"""qnnpack refuses qint8 activations ("Expected activation data type QUInt8 but got QInt8") that its BackendConfig lists, in builds without XNNPACK

Kind: valid-refused
Ask: Please list qint8 activations in get_qnnpack_backend_config() only where the build has XNNPACK, or make the error say that qint8 needs a build with XNNPACK.

What happens: Adding the cause to this thread: the x86-64 wheels are built without XNNPACK (torch._C._is_xnnpack_enabled() is False), and there qnnpack raises "quantized::conv2d (qnnpack): Expected activation data type QUInt8 but got QInt8" for Conv1d/2d/3d and ConvTranspose2d, while get_qnnpack_backend_config() lists torch.qint8 activations for Conv2d (qnnpack_weighted_op_qint8_symmetric_dtype_config), so a model prepared with that config fails only at run time.

Expected: A BackendConfig lists what the engine of this build runs.

Mechanism: qnnpack's qint8 path is XNNPACK (can_use_xnnp in aten/src/ATen/native/quantized/cpu/qconv.cpp, PR #73669), compiled only under USE_XNNPACK; torch/ao/quantization/backend_config/qnnpack.py lists the qint8 configs regardless of the build.
"""
import sys
import warnings

import torch
import torch.ao.nn.quantized as nnq
import torch.ao.quantization.backend_config.utils  # noqa: F401 - get_qnnpack_backend_config needs it loaded
from torch.ao.quantization.backend_config import get_qnnpack_backend_config

warnings.filterwarnings("ignore")  # torch.ao.nn.quantized is deprecated
print("torch", torch.__version__, "built with XNNPACK:", torch._C._is_xnnpack_enabled())
listed = {str(d.input_dtype) for c in get_qnnpack_backend_config().configs if c.pattern is torch.nn.Conv2d for d in c.dtype_configs}
print("get_qnnpack_backend_config() lists Conv2d activations", sorted(listed))
torch.backends.quantized.engine = "qnnpack"
m = nnq.Conv2d(2, 2, 3)
m.set_weight_bias(torch.quantize_per_tensor(torch.randn(2, 2, 3, 3), 0.01, 0, torch.qint8), None)
try:
    print("qnnpack runs qint8 activations: output", tuple(m(torch.quantize_per_tensor(torch.randn(1, 2, 5, 5), 0.01, 0, torch.qint8)).shape))
except RuntimeError as e:
    print("qnnpack raises:", str(e).splitlines()[0])
    sys.exit(1)
