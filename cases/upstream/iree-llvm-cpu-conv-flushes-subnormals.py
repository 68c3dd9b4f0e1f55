"""The CPU runtime flushes subnormal float32 inputs and results to zero, undocumented: a Conv of a subnormal input gives 0.0

Kind: by-design-undocumented
Ask: Documentation: state in the CPU deployment docs that modules run with flush-to-zero and denormals-are-zero on the local drivers, or make it a runtime option.

What happens: A float32 ONNX Conv (4x3x3 kernel) of x = 2^-128 (a subnormal) with w = 16, compiled for llvm-cpu with --iree-llvmcpu-target-cpu=host, returns 0.0 on both local-task and local-sync, where the exact result is 36 * 2^-124 = 1.69e-36 (a normal float). x = w = 2^-65 (products 2^-130 subnormal, exact sum 2.64e-38) also gives 0.0. A bare arith.mulf of 2^-128 by 16 gives 0.0 too, on llvm-cpu and on vmvx alike, while NumPy in the same process keeps it: the runtime, not the generated code, sets the mode.

Expected: IEEE 754 results, as onnx.reference and ONNX Runtime give, or a documented statement that subnormals are flushed.

Mechanism: runtime/src/iree/task/worker.c, iree_task_worker_main, calls iree_fpu_state_push(IREE_FPU_STATE_FLAG_FLUSH_DENORMALS_TO_ZERO) on every local-task worker ("We cannot rely on the global process settings for FPU state"), and base/internal/fpu_state.c sets FTZ and DAZ in MXCSR; where local-sync sets the same mode around a dispatch is not located (the caller's thread is restored afterwards).
"""
import sys
from importlib.metadata import version

import iree.compiler as ireec
import iree.runtime as rt
import numpy as np

X, W, Y = "!torch.vtensor<[1,4,3,3],f32>", "!torch.vtensor<[1,4,3,3],f32>", "!torch.vtensor<[1,1,1,1],f32>"
MLIR = f"""func.func @main(%x: {X}, %w: {W}) -> {Y} attributes {{torch.onnx_meta.opset_version = 18 : si64}} {{
  %y = torch.operator "onnx.Conv"(%x, %w) : ({X}, {W}) -> {Y}
  return %y : {Y}
}}"""
FLAGS = ["--iree-hal-target-device=local", "--iree-hal-local-target-device-backends=llvm-cpu", "--iree-llvmcpu-target-cpu=host"]
print("iree-base-compiler", version("iree-base-compiler"), "| iree-compile model.mlir", " ".join(FLAGS))
vmfb = ireec.compile_str(MLIR, input_type="auto", extra_args=FLAGS)
x, w = np.full((1, 4, 3, 3), 2.0 ** -128, np.float32), np.full((1, 4, 3, 3), 16.0, np.float32)  # x subnormal
got = {d: float(rt.load_vm_flatbuffer(vmfb, driver=d).main(x, w).to_host().item()) for d in ("local-task", "local-sync")}
print("exact", 36 * 2.0 ** -124, "| NumPy", float((x * w).sum()), "|", ", ".join(f"{d}: {v!r}" for d, v in got.items()))
sys.exit(1 if got["local-task"] == 0.0 else 0)
