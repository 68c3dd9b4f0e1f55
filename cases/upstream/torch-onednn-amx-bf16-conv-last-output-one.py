"""torch 2.13.0 CPU on an AMX CPU (Sapphire Rapids): oneDNN's brgemm conv gives wrong bfloat16 results
when the last output length is 1 with a last stride > 1, and segfaults when an output position sees
padding only. Compare with ONEDNN_MAX_CPU_ISA=AVX512_CORE_BF16 (right, no crash for the first)."""
import torch
import torch.nn.functional as F

torch.manual_seed(0)
x = torch.randn(2, 3, 4, 3, 3)
w = torch.randn(2, 3, 1, 1, 2)
y = F.conv3d(x.bfloat16(), w.bfloat16(), stride=(1, 1, 3)).double()
ref = F.conv3d(x.double(), w.double(), stride=(1, 1, 3))
print("rel err", ((y - ref).abs().max() / ref.abs().max()).item())  # ~1.87 on AMX; ~2e-3 capped
# crash (SIGSEGV in brgemm perform_outwork): every middle-dim tap lands in padding
x = torch.randn(1, 1, 5, 1, 3).bfloat16()
w = torch.randn(3, 1, 7, 2, 2).bfloat16()
F.conv3d(x, w, stride=(1, 3, 2), padding=(3, 1, 2), dilation=(1, 2, 2))
print("no crash")
