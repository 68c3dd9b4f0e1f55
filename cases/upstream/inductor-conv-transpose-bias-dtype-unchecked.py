"""Adds to #142479: torch.compile on CPU also runs a ConvTranspose whose bias dtype differs from its input's, where eager raises

Kind: invalid-accepted
Ask: please make the compiled ConvTranspose refuse a bias of another dtype than the input, as eager does, by checking the bias in the fake convolution too.

What happens: Adding to this thread, on CPU with torch 2.13.0: F.conv_transpose1d with a bfloat16 input and weight (groups 2, stride 2) and a float32 bias raises in eager, "Input type (CPUBFloat16Type) and bias type (float) should be the same", while torch.compile of the same function returns a float32 tensor of shape (1, 6, 6). The same holds for conv_transpose3d with a float32 input and a bfloat16 bias, and with a float64 input and a float16 bias (eager: "expected scalar type Double but found Half").

Expected: the error eager gives. The functional docs (https://pytorch.org/docs/stable/generated/torch.nn.functional.conv_transpose1d.html) name no cast of the bias, and a compiled function should refuse what eager refuses.

Mechanism: the fake convolution the compiler traces with (torch/_subclasses/fake_impls.py, conv, torch 2.13.0) checks the input's dtype against the weight's, the input/weight form of this thread, but not the bias's, so the graph compiles and the generated code adds the bias with a cast.
"""
import sys
import torch
import torch.nn.functional as F
print("torch", torch.__version__)
x, w = torch.ones(1, 4, 3, dtype=torch.bfloat16), torch.ones(4, 3, 2, dtype=torch.bfloat16)
b = torch.ones(6, dtype=torch.float32)  # float32 bias, bfloat16 input and weight
results = []
for name, fn in (("eager", F.conv_transpose1d), ("torch.compile", torch.compile(F.conv_transpose1d))):
    try:
        y = fn(x, w, b, stride=2, groups=2)
        results.append(f"returns {y.dtype} of shape {tuple(y.shape)}")
    except RuntimeError as exc:  # eager's refusal
        results.append(f"raises {type(exc).__name__}: {str(exc).strip().splitlines()[0][:100]}")
    print(f"{name}: {results[-1]}")
sys.exit(1 if results[0].startswith("raises") and results[1].startswith("returns") else 0)
