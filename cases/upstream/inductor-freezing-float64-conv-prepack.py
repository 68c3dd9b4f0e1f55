# inductor freezing on CPU: a float64 Conv2d/Conv3d (or ConvTranspose2d/3d) fails to compile (mkldnn weight prepack)
import torch
import torch._inductor.config as cfg

m = torch.nn.Conv2d(4, 6, 3, dtype=torch.float64).eval()
x = torch.randn(1, 4, 5, 5, dtype=torch.float64)
with torch.no_grad():
    for freezing in (False, True):
        torch._dynamo.reset()
        try:
            with cfg.patch(freezing=freezing):
                y = torch.compile(m, backend="inductor", fullgraph=True)(x)
            print(f"freezing={freezing}: max|y - eager| = {(y - m(x)).abs().max().item():.3g}")
        except Exception as e:
            print(f"freezing={freezing}: {type(e).__name__}: {' '.join(str(e).split(chr(10))[:2])[:200]}")
