"""Quantized Conv1d/2d/3d under qnnpack crash (SIGSEGV) where the kernel overhangs the input by less than a stride

Project: pytorch/pytorch (https://github.com/pytorch/pytorch/issues)
Upstream: none found
Related: https://github.com/pytorch/pytorch/issues/41406 (qnnpack memory corruption on small inputs, closed); https://github.com/google/XNNPACK/pull/10453 (the same phantom length-1 output from truncating output-size arithmetic)
Checked: 2026-11-28, torch 2.13.0+cpu, searched pytorch/pytorch issues for "qnnpack quantized conv segfault kernel larger than input", "qnnpack conv output size", "pytorch_qnnp_status_success INTERNAL ASSERT conv"

What happens: under torch.backends.quantized.engine = "qnnpack", a quantized Conv1d/2d/3d whose dilated kernel
overhangs the padded input by less than the stride kills the process with SIGSEGV in the forward call: input 4,
kernel 5, stride 2 (conv1d, conv2d and conv3d, groups 1 and 2); input 3, kernel 6, stride 4; input 3/5, kernel 4/6,
stride 2; input 6, kernel 9, stride 4. Two stride-3 shapes (input 3, kernel 5; input 2, kernel 4) raise
"run_status == pytorch_qnnp_status_success INTERNAL ASSERT FAILED" instead. A longer overhang raises "each dimension of
output tensor should be greater than 0", as intended. Float F.conv1d raises "Kernel size can't be greater than actual
input size" for all of them. Measured on an AVX-512 Xeon and an AVX2-only AMD EPYC (x86-64 qnnpack).

Expected: an error where the output length floor((n + pads - d*(k-1) - 1) / s) + 1 is below 1, as for a longer
overhang; never a crash.

Mechanism: PackedConvWeightsQnnp::apply_impl (aten/src/ATen/native/quantized/cpu/qconv.cpp) sizes the output with
at::native::quantized::MakeConvOutputShape, whose length (n + pads - d*(k-1) - 1) / s + 1 is C division truncating
toward zero: (4 - 5) / 2 + 1 = 1, so its "each dimension of output tensor should be greater than 0" check passes and
qnnpack runs a convolution whose only window starts inside the input and ends past it; the crash is consistent with
reads past the input (not traced further).

Host: any CPU with the qnnpack quantized engine.
"""
import subprocess
import sys
import warnings

import numpy as np

# (input n, kernel k, stride s, rank): floor length 0, C truncation 1. The child runs them in this order and the
# crash ends it, so the case that raises comes first.
CASES = [(3, 5, 3, 1), (4, 5, 2, 1)]


def child() -> None:
    """Run the overhanging quantized convs under qnnpack, printing each result before the next."""
    import torch
    import torch.ao.nn.quantized as nnq
    warnings.filterwarnings("ignore")  # torch 2.13 deprecates torch.ao quantized modules
    print(f"torch {torch.__version__}, quantized engines {torch.backends.quantized.supported_engines}", flush=True)
    if "qnnpack" not in torch.backends.quantized.supported_engines:
        print("no qnnpack", flush=True)
        return
    torch.backends.quantized.engine = "qnnpack"
    for n, k, s, rank in CASES:
        ones = (1,) * (rank - 1)
        m = (nnq.Conv1d, nnq.Conv2d, nnq.Conv3d)[rank - 1](1, 1, ones + (k,), stride=ones + (s,), bias=False)
        w = torch._make_per_tensor_quantized_tensor(torch.ones((1, 1) + ones + (k,), dtype=torch.int8), 1.0, 0)
        m.set_weight_bias(w, None)
        m.scale, m.zero_point = 1.0, 0
        x = np.arange(1, n + 1, dtype=np.uint8).reshape((1, 1) + ones + (n,))
        print(f"qnnpack conv{rank}d input {n}, kernel {k}, stride {s} (length floor {(n - k) // s + 1}, C truncation "
              f"{int((n - k) / s) + 1}): ", end="", flush=True)
        try:
            y = m(torch._make_per_tensor_quantized_tensor(torch.from_numpy(x), 1.0, 0))
            print(f"returns shape {tuple(y.shape)}, y = {y.int_repr().flatten().tolist()}", flush=True)
        except RuntimeError as exc:
            print("raises " + " ".join(str(exc).split())[:100], flush=True)


def main() -> int:
    p = subprocess.run([sys.executable, __file__, "child"], capture_output=True, text=True, timeout=300)
    out = p.stdout
    if p.returncode < 0:
        out += f"process killed by signal {-p.returncode} (SIGSEGV is 11)"
    print(out.rstrip() or f"child exit {p.returncode}: {p.stderr.strip().splitlines()[-1:]}")
    if "no qnnpack" in out:
        print("not shown on this host: the qnnpack quantized engine is not built in")
        return 0
    return 1 if p.returncode < 0 else 0


if __name__ == "__main__":
    if sys.argv[1:] == ["child"]:
        child()
        sys.exit(0)
    sys.exit(main())
