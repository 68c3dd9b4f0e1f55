"""Which oneDNN kernel torch really runs an int8 convolution with: a live probe for a host fact.

oneDNN picks its int8 kernels from CPUID capped by ONEDNN_MAX_CPU_ISA, and torch's x86 quantized
engine sends a conv to oneDNN or to fbgemm by its own CPUID test; neither decision is exposed as a
value. The probe runs one u8 x s8 conv2d through a quantized engine with oneDNN's verbose log on
and reads the ISA from the convolution kernel's implementation name (`brgconv:avx10_1_512_amx`,
`jit_uni_int8_1x1:avx2`, ...). "none" means the engine ran no oneDNN convolution (fbgemm, qnnpack).
"""

from __future__ import annotations

import ctypes
import os
import sys
import tempfile
import warnings
from typing import Any

# oneDNN ISAs whose int8 kernels multiply u8 x s8 with vpmaddubsw (int16 pair sums): no VNNI, no AMX
NO_VNNI_ISAS = ("sse41", "avx", "avx2", "avx512_core")


def int8_conv_isa(torch: Any, engine: str) -> str:
    """The ISA suffix of the oneDNN convolution kernel `engine` ran a tiny u8 x s8 conv2d with."""
    previous = torch.backends.quantized.engine
    try:
        torch.backends.quantized.engine = engine
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch 2.13 deprecates quantized tensors
            conv = torch.ao.nn.quantized.Conv2d(8, 8, 3)
            x = torch.quantize_per_tensor(torch.ones(1, 8, 6, 6), 1.0, 0, torch.quint8)
            log = _stdout_of(lambda: _verbose(torch, lambda: conv(x)))
    except Exception as exc:  # noqa: BLE001 - the fact then says why there is no answer
        return f"error ({type(exc).__name__})"
    finally:
        torch.backends.quantized.engine = previous
    return kernel_isa(log)


def kernel_isa(log: str) -> str:
    """The ISA of the first convolution executed in a oneDNN verbose log ('none' if there is none).

    An exec line reads `onednn_verbose,v1,primitive,exec,cpu,convolution,<impl>:<isa>,...`."""
    for line in log.splitlines():
        fields = line.split(",")
        if "exec" in fields and "convolution" in fields:
            impl = fields[fields.index("convolution") + 1]
            return impl.rpartition(":")[2] or impl
    return "none"


def _verbose(torch: Any, fn: Any) -> None:
    with torch.backends.mkldnn.verbose(torch.backends.mkldnn.VERBOSE_ON):
        fn()


def _stdout_of(fn: Any) -> str:
    """What `fn` writes to file descriptor 1 (oneDNN prints its log with C stdio)."""
    libc = ctypes.CDLL(None)
    sys.stdout.flush()
    saved = os.dup(1)
    with tempfile.TemporaryFile() as tmp:
        os.dup2(tmp.fileno(), 1)
        try:
            fn()
        finally:
            libc.fflush(None)
            os.dup2(saved, 1)
            os.close(saved)
        tmp.seek(0)
        return tmp.read().decode("utf-8", "replace")
