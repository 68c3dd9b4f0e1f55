"""Adds to #142479: torch.export also traces convolutions that eager refuses (dilation 0, mixed dtypes), and the programs run downstream

Kind: invalid-accepted
Ask: please make the meta/fake convolution check what eager checks (dilation > 0, input/weight/bias dtypes), as PR #177685 proposed, so that torch.export refuses these as eager does.

What happens: Adding to this thread, on CPU with torch 2.13.0: torch.export.export traces F.conv1d with dilation=0, F.conv1d with a float16 input and a float32 weight, and F.conv_transpose1d with int64 input and weight and a float64 bias, while each eager call raises. Compilers that take the exported program then run it: TVM's from_exported_program compiles the first two and returns outputs, and ExecuTorch's portable kernels run the third. torch.compile (Inductor) and torch.onnx.export refuse all three.

Expected: the errors eager gives, at export: "dilation should be greater than zero", "expected scalar type Half but found Float", "result type Double can't be cast to the desired output type Long".

Mechanism: the fake convolution (torch/_subclasses/fake_impls.py, conv) checks the input and weight dtypes only when the fake mode refuses non-fake inputs, and torch.export's mode allows them (torch/_export/non_strict_utils.py); it and meta_conv (torch/_meta_registrations.py) compute the shape with no check of dilation or bias dtype, which eager makes in aten/src/ATen/native/Convolution.cpp. PR #177685 added these checks and was closed unmerged.
"""
import sys
import torch
import torch.nn.functional as F
print("torch", torch.__version__)
x, w, b64 = torch.ones(1, 1, 5), torch.ones(1, 1, 3), torch.ones(1, dtype=torch.float64)
cases = {"conv1d, dilation=0": (lambda x, w: F.conv1d(x, w, dilation=0), (x, w)),
         "conv1d, float16 input, float32 weight": (lambda x, w: F.conv1d(x, w), (x.half(), w)),
         "conv_transpose1d, int64 input and weight, float64 bias": (lambda x, w: F.conv_transpose1d(x, w, b64), (x.long(), w.long()))}
traced = 0
for name, (f, args) in cases.items():
    results = []
    for run in (lambda: f(*args), lambda: torch.export.export(type("M", (torch.nn.Module,), {"forward": lambda self, x, w: f(x, w)})(), args)):
        try:
            run()
            results.append("accepts it")
        except Exception as exc:  # eager's refusal
            results.append(f"raises {type(exc).__name__}: {str(exc).strip().splitlines()[0][:90]}")
    print(f"{name}: eager {results[0]}; torch.export {results[1]}")
    traced += results[0] != "accepts it" and results[1] == "accepts it"
sys.exit(1 if traced else 0)
