"""bfloat16 conv3d segfaults on AMX CPUs when every output plane along depth (or row along height) reads padding only

Kind: crash
Ask: Please fix the missing post-work kernel in oneDNN's AMX brgemm convolution (or route such shapes to another kernel).

What happens: On an AMX CPU (torch 2.13.0+cpu, oneDNN v3.12.0), bfloat16 F.conv3d of a 1x8x1x4x4 input, 8x8x2x1x1 weight, padding (2, 0, 0), dilation (3, 1, 1) dies with SIGSEGV. Both depth outputs read padding only, so the result is zeros, as float32 gives. Probes: 28 of 28 conv3d shapes with an all-padding depth crashed; all-padding widths (oneDNN PR 5944's form) 0 of 37. Under ONEDNN_MAX_CPU_ISA=AVX512_CORE_VNNI or AVX2 all run.

Expected: A window that reads no input gives the bias (here zero).

Mechanism: With the AMX microkernel, brgemm_convolution_fwd_t::pd_t::init (src/cpu/x64/jit_brgemm_conv.cpp, v3.12.0 and main) adds brgemm descriptors only for (kd, kh) ranges some output makes non-empty; with every plane padding-only there is none, so add_po_kernels makes no post-work kernel and perform_outwork, from ker_trans, calls a null one (gdb).

Symptoms:
torch (and torch.compile) bf16: conv2d, conv3d and stride-1 ConvTranspose2d/3d.
torch.ao ConvTranspose2d/3d, stride 1 (onednn and x86 engines): 165 of 400 random such shapes.
TensorFlow 2.21.0, oneDNN on: bf16 NHWC conv2d, NDHWC conv3d and conv3d_transpose.
OpenVINO 2026.4.1: Convolution at bf16 precision, bf16 and int8 ConvTranspose.
"""
import sys

import torch
import torch.nn.functional as F

print("torch", torch.__version__)
x = torch.ones(1, 8, 1, 4, 4)
w = torch.ones(8, 8, 2, 1, 1)
# one input plane, kernel depth 2 dilated by 3, depth padding 2: both output planes read padding only
ref = F.conv3d(x, w, padding=(2, 0, 0), dilation=(3, 1, 1))
print("float32: shape", tuple(ref.shape), "max", float(ref.abs().max()), flush=True)
y = F.conv3d(x.bfloat16(), w.bfloat16(), padding=(2, 0, 0), dilation=(3, 1, 1))  # SIGSEGV on AMX CPUs
print("bfloat16: shape", tuple(y.shape), "max", float(y.abs().max()))
sys.exit(0 if torch.equal(y.float(), ref) else 1)
