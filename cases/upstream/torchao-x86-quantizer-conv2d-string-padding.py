"""X86InductorQuantizer raises "conv2d is not an aten conv2d operator" for Conv2d(padding="same" or "valid")

Kind: valid-refused
Ask: Please annotate aten.conv2d.padding (the string-padding overload) in X86InductorQuantizer._annotate_conv2d, or skip it, rather than raise.

What happens: nn.Conv2d(4, 6, 3, padding="same") (or "valid") exports as aten.conv2d.padding, and prepare_pt2e with X86InductorQuantizer().set_global(get_default_x86_inductor_quantization_config()) raises "ValueError: conv2d is not an aten conv2d operator". The same conv with integer padding 1 (or 0) exports as aten.conv2d.default, quantizes, and after convert_pt2e is within 0.011 of float64 for outputs up to 1.7.

Expected: padding="same" and "valid" are documented Conv2d arguments (https://pytorch.org/docs/stable/generated/torch.nn.Conv2d.html), equivalent to the integer pads here; the quantizer treats them alike.

Mechanism: torchao/quantization/pt2e/quantizer/x86_inductor_quantizer.py (torchao 0.18.0), X86InductorQuantizer._annotate_conv2d (lines 1216-1220) accepts aten.conv2d.default only and raises for any other target; it is the one annotator that raises where the fused-pattern annotators skip the node.
"""
import logging
logging.disable(logging.WARNING)  # torchao's import-time deprecation messages
import torch
import torchao
import torchao.quantization.pt2e.quantizer.x86_inductor_quantizer as xiq
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e

print("torch", torch.__version__, "torchao", torchao.__version__)
refused = False
for padding in ("same", 1, "valid", 0):
    gm = torch.export.export(torch.nn.Conv2d(4, 6, 3, padding=padding).eval(), (torch.randn(1, 4, 7, 7),)).module()
    op = next(n.target for n in gm.graph.nodes if n.op == "call_function" and "conv" in str(n.target))
    try:
        prepare_pt2e(gm, xiq.X86InductorQuantizer().set_global(xiq.get_default_x86_inductor_quantization_config()))
        print(f"padding={padding!r}: exports as {op}, prepare_pt2e annotates it")
    except ValueError as e:
        print(f"padding={padding!r}: exports as {op}, prepare_pt2e raises ValueError: {e}")
        refused = True
raise SystemExit(1 if refused else 0)
