"""torchao's X86InductorQuantizer raises on nn.Conv2d(padding="same" | "valid").

torch.export records such a conv as aten.conv2d.padding (the string overload); the quantizer's
conv2d annotation accepts aten.conv2d.default only and raises instead of annotating (or skipping)
it. The same conv written with integer padding quantizes, compiles and runs."""
import torch
import torchao
import torchao.quantization.pt2e.quantizer.x86_inductor_quantizer as xiq
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

print("torch", torch.__version__, "torchao", torchao.__version__)
x = torch.randn(1, 4, 7, 7)
for padding in (1, "same", 0, "valid"):
    m = torch.nn.Conv2d(4, 6, 3, padding=padding).eval()
    gm = torch.export.export(m, (x,)).module()
    op = next(n.target for n in gm.graph.nodes if n.op == "call_function" and "conv" in str(n.target))
    quantizer = xiq.X86InductorQuantizer().set_global(xiq.get_default_x86_inductor_quantization_config())
    try:
        prepared = prepare_pt2e(gm, quantizer)
        prepared(x)
        y = convert_pt2e(prepared)(x)
        print(f"padding={padding!r:8} {op}: quantized, output {tuple(y.shape)}")
    except Exception as exc:  # noqa: BLE001
        print(f"padding={padding!r:8} {op}: {type(exc).__name__}: {exc}")
