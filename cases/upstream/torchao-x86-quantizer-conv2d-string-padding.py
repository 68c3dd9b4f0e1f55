"""X86InductorQuantizer raises "conv2d is not an aten conv2d operator" on nn.Conv2d(padding="same" | "valid")

Project: pytorch/ao (https://github.com/pytorch/ao/issues)
Upstream: none found
Related: https://github.com/pytorch/pytorch/issues/76304 (string padding in eager torch.ao quantized conv, fixed by https://github.com/pytorch/pytorch/pull/77928)
Checked: 2026-11-28, torch 2.13.0+cpu, torchao 0.18.0, searched pytorch/ao and pytorch/pytorch issues for "is not an aten conv2d operator", "X86InductorQuantizer padding same", "aten.conv2d.padding quantizer"

What happens: torch.export records nn.Conv2d(padding="same") and nn.Conv2d(padding="valid") as aten.conv2d.padding,
the string overload. prepare_pt2e with X86InductorQuantizer (get_default_x86_inductor_quantization_config) then
raises "ValueError: conv2d is not an aten conv2d operator" instead of annotating the conv or leaving it unquantized.
The same conv written with integer padding (1 for a 3x3 "same" with stride 1, 0 for "valid") exports as
aten.conv2d.default, quantizes, and its converted output stays within a few quantization steps of the float64
result. Every conv2d with string padding in a model stops the whole quantization flow.

Expected: the quantizer annotates aten.conv2d.padding like aten.conv2d.default (the padding string does not change
what is quantized: input, weight, bias, output), or at least skips the node as its other annotators skip convs they do
not handle, so that prepare_pt2e succeeds.

Mechanism: torchao/quantization/pt2e/quantizer/x86_inductor_quantizer.py, X86InductorQuantizer._annotate_conv2d
(lines 1202-1220 in torchao 0.18.0): for every source partition of nn.Conv2d / F.conv2d it requires
conv_node.target == torch.ops.aten.conv2d.default and raises ValueError otherwise; the fused-pattern annotators in the
same file (_annotate_conv2d_unary, _annotate_conv2d_binary, ...) `continue` on that condition instead.

Host: any.
"""
import sys
import warnings

import numpy as np
import torch

warnings.filterwarnings("ignore")


def main() -> int:
    import logging
    logging.disable(logging.WARNING)  # torchao logs a deprecation warning per Enum on import
    import torchao
    import torchao.quantization.pt2e.quantizer.x86_inductor_quantizer as xiq
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    print(f"torch {torch.__version__}, torchao {torchao.__version__}")
    torch.manual_seed(0)
    x = torch.randn(1, 4, 7, 7)
    raised = 0
    for padding, integer in (("same", 1), ("valid", 0)):
        for p in (padding, integer):
            m = torch.nn.Conv2d(4, 6, 3, padding=p).eval()
            with torch.no_grad():
                ref = torch.nn.functional.conv2d(x.double(), m.weight.double(), m.bias.double(), padding=integer).numpy()
            gm = torch.export.export(m, (x,)).module()
            op = next(n.target for n in gm.graph.nodes if n.op == "call_function" and "conv" in str(n.target))
            quantizer = xiq.X86InductorQuantizer().set_global(xiq.get_default_x86_inductor_quantization_config())
            try:
                prepared = prepare_pt2e(gm, quantizer)
            except ValueError as exc:
                print(f"Conv2d(4, 6, 3, padding={p!r}) exports as {op}: prepare_pt2e raises ValueError: {exc}")
                raised += 1
                continue
            prepared(x)
            y = convert_pt2e(prepared)(x).detach().numpy()
            print(f"Conv2d(4, 6, 3, padding={p!r}) exports as {op}: quantized, output {y.shape} (float64 reference "
                  f"{ref.shape}), max |y - reference| = {np.abs(y - ref).max():.3g} (max |reference| "
                  f"{np.abs(ref).max():.3g})")
    return 1 if raised else 0


if __name__ == "__main__":
    sys.exit(main())
