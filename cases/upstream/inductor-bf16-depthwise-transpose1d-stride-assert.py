"""torch.compile (inductor, freezing) of a depthwise bfloat16 conv_transpose1d on a channels-last input fails its own
output stride check at run time; eager runs it, and so does the compiled module with batch 1 or in float32/float16."""
import torch
import torch._inductor.config

torch.manual_seed(0)
m = torch.nn.ConvTranspose1d(4, 4, kernel_size=2, groups=4, bias=False).eval()
torch._inductor.config.freezing = True
for dtype in (torch.bfloat16, torch.float32, torch.float16):
    for batch in (1, 2):
        x = torch.randn(batch, 1, 4).to(dtype).movedim(-1, 1)  # (N, L, C) data seen as (N, C, L): strides of NLC
        mod = m.to(dtype)
        want = mod(x)
        torch._dynamo.reset()
        try:
            with torch.no_grad():
                got = torch.compile(mod, backend="inductor", fullgraph=True)(x)
            print(f"torch {torch.__version__} {dtype} batch {batch}: compiled ran, max |diff| vs eager "
                  f"{(got.float() - want.float()).abs().max().item():.3g}")
        except Exception as exc:  # noqa: BLE001 - the bug
            print(f"torch {torch.__version__} {dtype} batch {batch}: {type(exc).__name__}: {str(exc).splitlines()[0][:150]}")
