"""ExecuTorch, PyTorch's on-device path: a module exported with torch.export, lowered to an ExecuTorch program
(`.pte`) and run by ExecuTorch's Python runtime. `executorch`: the program with ops the XNNPACK partitioner takes
delegated to XNNPACK (float, and int8 through the PT2E XNNPACK quantizer); `executorch-portable`: the same program
without a delegate, on the runtime's own CPU kernels.

Modules: program.py (the float module, lowering, what was delegated), quant.py (the PT2E XNNPACK quantizer with
the case's pinned parameters), runtime.py (loading and running a program, the live host facts), batch.py (many
cases lowered as one program, for prepare()), backend.py (the two adapters).
"""
