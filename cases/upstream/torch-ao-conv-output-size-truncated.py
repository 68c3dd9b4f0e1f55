"""Quantized convs accept a kernel longer than the padded input: a length-1 or empty output, or a segfault under qnnpack

Kind: invalid-accepted
Ask: Please raise in every quantized engine, as the float convolution does.

What happens: Input 4, kernel 5, stride 2: fbgemm, x86 and onednn return length 1; qnnpack segfaults. Input 2, kernel 3, stride 1: onednn and x86 (AVX512-VNNI CPUs) return an empty tensor. Float F.conv1d raises for both.

Expected: An error where floor((n + 2p - d(k - 1) - 1) / s) + 1 < 1 (https://pytorch.org/docs/stable/generated/torch.nn.Conv1d.html).

Mechanism: The quantized ops truncate the length toward zero ((4 - 5) / 2 + 1 = 1: fbgemm's conv_param_t OUT_DIM, qnnpack's MakeConvOutputShape), so their "greater than 0" checks pass; PackedConvWeightsOnednn::apply_impl (aten/src/ATen/native/quantized/cpu/qconv.cpp, torch 2.13.0) has none.

Symptoms:
fbgemm, x86, onednn: length 1 for an overhang shorter than a stride.
onednn, and x86 when it runs oneDNN: empty one stride further.
qnnpack: SIGSEGV or an internal assert.
"""
import sys
import warnings

import torch
import torch.ao.nn.quantized as nnq

warnings.filterwarnings("ignore")  # torch.ao.nn.quantized is deprecated
print("torch", torch.__version__)
accepted = False  # float F.conv1d raises for both shapes: the kernel does not fit the input
for (n, k, s), engine in [(shape, e) for shape in ((4, 5, 2), (2, 3, 1)) for e in ("fbgemm", "x86", "onednn")]:
    torch.backends.quantized.engine = engine
    m = nnq.Conv1d(1, 1, k, stride=s, bias=False)
    m.set_weight_bias(torch.quantize_per_tensor(torch.ones(1, 1, k), 1.0, 0, torch.qint8), None)
    try:
        y = m(torch.quantize_per_tensor(torch.tensor([[[1.0, 2.0, 4.0, 8.0][:n]]]), 1.0, 0, torch.quint8)).int_repr()
        print(f"input {n}, kernel {k}, stride {s}, {engine}: returns shape {tuple(y.shape)}, {y.flatten().tolist()}")
        accepted = True
    except RuntimeError as e:
        print(f"input {n}, kernel {k}, stride {s}, {engine}: raises {str(e).splitlines()[0][:70]!r}")
sys.exit(1 if accepted else 0)
