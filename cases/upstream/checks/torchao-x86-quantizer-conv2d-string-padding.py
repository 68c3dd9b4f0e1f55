"""X86InductorQuantizer raises "conv2d is not an aten conv2d operator" on nn.Conv2d(padding="same" | "valid")

Measures: Conv2d(4, 6, 3) with padding 'same' / 1 and 'valid' / 0, exported and given to prepare_pt2e with
X86InductorQuantizer: the exported conv op, the ValueError, or the quantized output's error against float64. Exit 1
when prepare_pt2e raises.
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
