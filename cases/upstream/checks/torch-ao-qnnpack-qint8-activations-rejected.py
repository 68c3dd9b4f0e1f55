"""qnnpack engine rejects the qint8 activations its BackendConfig offers on builds without XNNPACK (x86 wheels)

Measures: whether XNNPACK is built in, the activation dtypes get_qnnpack_backend_config() lists for Conv2d, and
qnnpack Conv1d/2d/3d and ConvTranspose2d on qint8 activations (the error, or the values). Exit 1 when qint8 Conv2d is
refused.
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
