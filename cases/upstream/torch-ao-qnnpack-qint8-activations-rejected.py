"""qnnpack engine rejects the qint8 activations its BackendConfig offers on builds without XNNPACK (x86 wheels)

Project: pytorch/pytorch (https://github.com/pytorch/pytorch/issues)
Upstream: comment for https://github.com/pytorch/pytorch/issues/83156
Related: https://github.com/pytorch/pytorch/pull/73669 (qint8 quantized conv backed by XNNPACK, only "if built with USE_XNNPACK"); https://github.com/pytorch/pytorch/issues/76298 (qint8 activations in eager QAT, closed)
Checked: 2026-11-28, torch 2.13.0+cpu, searched pytorch/pytorch issues for "Expected activation data type QUInt8 but got QInt8", "qnnpack qint8 activation conv", "default_symmetric_qnnpack_qconfig error"

What happens: torch.ao.quantization.backend_config.get_qnnpack_backend_config() lists conv with qint8 activations
(qnnpack_weighted_op_qint8_symmetric_dtype_config: symmetric, scale >= 2^-12), and torch.ao.quantization offers
default_symmetric_qnnpack_qconfig for it. On the x86-64 Linux wheel (torch 2.13.0+cpu, built without XNNPACK:
torch._C._is_xnnpack_enabled() is False) every quantized Conv1d/2d/3d and ConvTranspose2d under the qnnpack engine
with qint8 activations raises "quantized::conv(qnnpack): Expected activation data type QUInt8 but got QInt8"
("quantized::conv_transpose(qnnpack): ..." for the transposed one). A model quantized with the qnnpack
BackendConfig's qint8 pattern therefore converts and then fails at its first forward call, with a message that does
not say that the qint8 path needs XNNPACK. (#83156 reported the same error with default_symmetric_qnnpack_qat_qconfig
and was closed with a forum answer.)

Expected: either the qint8 path runs (PR #73669: qint8 conv via XNNPACK), or the BackendConfig and qconfigs that
produce qint8 activations for qnnpack are only offered where it exists, and the error names the missing XNNPACK
build. The script's reference for the conv is exact integers: with x = 1, w = 1 and all scales 1 every output of a 2
-> 2 channel 3x3 conv is 18.

Mechanism: in aten/src/ATen/native/quantized/cpu/qconv.cpp, PackedConvWeightsQnnp::apply sends qint8 activations to
XNNPACK (can_use_xnnp, compiled only under USE_XNNPACK); without it apply_impl checks for QUInt8 and raises. The
BackendConfig (torch/ao/quantization/backend_config/qnnpack.py) does not depend on the build.

Host: torch builds without XNNPACK (the x86-64 Linux wheels); with XNNPACK, 2-D convs run and 3-D ones are refused
as "Unsupported conv config for dtype KQInt8".
"""
import sys
import warnings

import torch
import torch.ao.nn.quantized as nnq
import torch.ao.quantization.backend_config.utils  # noqa: F401 - get_qnnpack_backend_config needs it loaded

warnings.filterwarnings("ignore")  # torch 2.13 deprecates torch.ao quantized modules


def main() -> int:
    xnnpack = torch._C._is_xnnpack_enabled() if hasattr(torch._C, "_is_xnnpack_enabled") else "unknown"
    print(f"torch {torch.__version__}, quantized engines {torch.backends.quantized.supported_engines}, "
          f"XNNPACK built in: {xnnpack}")
    if "qnnpack" not in torch.backends.quantized.supported_engines:
        print("not shown on this host: the qnnpack quantized engine is not built in")
        return 0
    try:
        from torch.ao.quantization.backend_config import get_qnnpack_backend_config
        conv_dtypes = sorted({str(dc.input_dtype) for c in get_qnnpack_backend_config().configs
                              if c.pattern in (torch.nn.Conv2d, torch.nn.functional.conv2d) for dc in c.dtype_configs})
        print(f"get_qnnpack_backend_config(): Conv2d input (activation) dtypes {conv_dtypes}")
    except Exception as exc:  # noqa: BLE001 - informative only
        print(f"get_qnnpack_backend_config() not read: {type(exc).__name__}: {str(exc).splitlines()[0][:80]}")
    torch.backends.quantized.engine = "qnnpack"
    rejected = {}
    for module, rank in ((nnq.Conv1d, 1), (nnq.Conv2d, 2), (nnq.Conv3d, 3), (nnq.ConvTranspose2d, 2)):
        m = module(2, 2, 3, bias=False)
        m.set_weight_bias(torch._make_per_tensor_quantized_tensor(torch.ones((2, 2) + (3,) * rank, dtype=torch.int8),
                                                                  1.0, 0), None)
        m.scale, m.zero_point = 1.0, 0
        x = torch._make_per_tensor_quantized_tensor(torch.ones((1, 2) + (5,) * rank, dtype=torch.int8), 1.0, 0)
        try:
            y = m(x)
            values = sorted(set(y.int_repr().flatten().tolist()))
            print(f"{module.__name__:16s} qint8 activations: runs, output values {values[:4]} (conv: expected 18)")
        except RuntimeError as exc:
            rejected[module.__name__] = str(exc).splitlines()[0][:100]
            print(f"{module.__name__:16s} qint8 activations: raises {rejected[module.__name__]}")
    if "Conv2d" not in rejected:
        print("not shown on this host: qnnpack runs qint8 Conv2d here (XNNPACK is built in)")
        return 0
    return 1


if __name__ == "__main__":
    sys.exit(main())
