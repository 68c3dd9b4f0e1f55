"""PyTorch: the canonical semantics are PyTorch's, so translation is mostly direct.

Native: symmetric int padding, 'same' (stride 1) and 'valid' for conv,
output_padding, dilation, groups, channels_last as a memory format.
Exact identities (recorded in the result): asymmetric conv padding as F.pad then
VALID; asymmetric transposed padding as the smaller symmetric padding then a crop.
An epilogue runs as torch ops after the conv (backends/torch/epilogue.py).
"""

from __future__ import annotations

import os
import re
from typing import Any

import numpy as np

from backends.base import Backend, Capabilities, HostFact, KernelVariant, Output, Rejected, Unsupported, first_line
from backends.pads import stated_pads
from backends.torch import epilogue as torch_epilogue
from backends.torch.threads import TorchThreads
from harness.model.case import EPILOGUE_OPS, Case
from harness.numerics.inputs import Inputs

TORCH_DTYPES = ("float64", "float32", "float16", "bfloat16")


def tf32_requested() -> bool:
    """TF32 is off unless CONVDIFF_TF32=on (then CUDA convolutions may use it)."""
    return os.environ.get("CONVDIFF_TF32", "off").lower() in ("1", "on", "true")


def gpu_driver() -> str:
    """The NVIDIA driver version, from nvidia-smi (frameworks do not expose it)."""
    import subprocess

    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=10)
        return out.stdout.strip().splitlines()[0] if out.returncode == 0 and out.stdout.strip() else "unknown"
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"


def invalid_padding_reason(case: Case) -> str | None:
    """Why an invalid transposed case with asymmetric padding has no faithful torch call: torch's
    transposed padding is symmetric, and the symmetric part plus a crop that expresses a valid case
    would have the crop (an empty or reversed slice), not torch, judge an invalid one."""
    if case.geometry is None and case.transpose and isinstance(case.padding, tuple) \
            and any(b != a for b, a in case.padding):
        return ("invalid transposed conv with asymmetric padding: torch's padding is symmetric, and the "
                "min(before, after) + crop that states a valid case would judge this one, not torch")
    if case.geometry is None and isinstance(case.padding, tuple) and any(b != a for b, a in case.padding) \
            and min(v for pair in case.padding for v in pair) < 0:
        return ("invalid conv with asymmetric negative padding: torch's conv padding is symmetric, and "
                "F.pad, which states asymmetric padding, crops by a negative amount (its documented meaning)")
    return None


# What the torch template imports (harness/execution/zygote.py): torch, and the symbolic-shapes module that torch's
# autograd.grad and every compile path import at first use. The paths that import torch beside another framework
# list these first, so that their templates fork from torch's (zygote.parent_of) instead of importing it again.
TORCH_TEMPLATE = ("torch", "torch.fx.experimental.symbolic_shapes")


def bf16_subnormals(torch: Any) -> str:
    """What torch's bfloat16 CPU conv does with a subnormal input (2^-128, weights 16: a normal result), a live
    probe: `kept`, or `flushed` where oneDNN's AVX512_BF16 instructions treat it as zero (they ignore MXCSR)."""
    x = torch.full((1, 1, 1, 1), 2.0 ** -128, dtype=torch.bfloat16)
    y = torch.nn.functional.conv2d(x, torch.full((1, 1, 1, 1), 16.0, dtype=torch.bfloat16))
    return "kept" if float(y.reshape(-1)[0]) != 0.0 else "flushed"


class TorchBackend(TorchThreads, Backend):
    name = "torch"
    framework = "torch"
    # torch.autograd.grad imports symbolic_shapes (and sympy) on its first call: 0.45 s in each forked
    # worker that differentiates (the mutants' too) unless the zygote has imported it; 0.24 s of the zygote's
    # start otherwise, so only a run that differentiates has it imported there (TORCH_TEMPLATE then)
    preload = TORCH_TEMPLATE[:1]
    gradient_preload = TORCH_TEMPLATE[1:]
    epilogue_ops = EPILOGUE_OPS
    capabilities = Capabilities(
        padding=("symmetric", "same (conv, stride 1)", "valid (conv)"),
        padding_identities=("asymmetric conv: F.pad then VALID", "same with stride > 1: explicit pads",
                            "asymmetric transpose: symmetric then crop"),
        gradients="torch.autograd.grad",
        unbatched=True,
        torch_same=True,
    )

    MKLDNN_OFF = "torch.backends.mkldnn.enabled=False"
    mkldnn_off = False  # use_kernel_variant: ATen's own CPU convolutions (im2col + GEMM, slow_conv_*), no oneDNN

    def kernel_variants(self, host: dict[str, HostFact]) -> tuple[KernelVariant, ...]:
        if host.get("torch_mkldnn") is False:
            raise Unsupported(f"{self.name}: this torch build has no oneDNN (torch.backends.mkldnn.is_available() "
                              "is False): its CPU convolutions have one path")
        return (KernelVariant(self.MKLDNN_OFF, "torch.backends.mkldnn.enabled = False: ATen's own CPU convolution "
                              "kernels instead of oneDNN's"),)

    def use_kernel_variant(self, name: str) -> None:
        if name != self.MKLDNN_OFF:
            super().use_kernel_variant(name)
        self.mkldnn_off = True

    def setup(self, device: str) -> None:
        import torch

        self.torch = torch
        self.apply_threads()
        if self.mkldnn_off:
            torch.backends.mkldnn.enabled = False
        if device == "cuda" and torch.cuda.is_available():
            torch.backends.cudnn.allow_tf32 = tf32_requested()
            torch.backends.cuda.matmul.allow_tf32 = tf32_requested()

    def device_reason(self, device: str) -> str | None:
        if device == "cpu":
            return None
        if device == "cuda":
            import torch

            if not torch.cuda.is_available():
                return "no CUDA device (torch.cuda.is_available() is False)"
            return None
        return f"unknown device {device}"

    def host_facts(self, device: str) -> dict[str, HostFact]:
        torch = self.torch
        mkldnn = torch.ops.mkldnn
        config = torch.__config__.show()
        onednn = re.search(r"MKL-DNN v([\w.]+)", config)
        mkl = re.search(r"Math Kernel Library Version ([\w.]+)", config)
        return {
            "torch_cpu_capability": str(torch.backends.cpu.get_cpu_capability()),
            "torch_mkldnn": bool(torch.backends.mkldnn.is_available()),
            # oneDNN's own answer for this CPU, after ONEDNN_MAX_CPU_ISA
            "torch_mkldnn_bf16": bool(mkldnn._is_mkldnn_bf16_supported()),
            "torch_mkldnn_fp16": bool(mkldnn._is_mkldnn_fp16_supported()),
            "torch_onednn_version": onednn.group(1) if onednn else "none",
            "torch_mkl_version": mkl.group(1) if mkl else "none",
            "torch_threads": int(torch.get_num_threads()),
            "torch_bf16_subnormals": bf16_subnormals(torch),
        }

    def fingerprint(self, device: str) -> dict[str, str]:
        torch = self.torch
        info = {"version": str(torch.__version__)}
        if device == "cuda" and torch.cuda.is_available():
            info.update(
                gpu=torch.cuda.get_device_name(0), driver=gpu_driver(), cuda=str(torch.version.cuda),
                cudnn=str(torch.backends.cudnn.version()), tf32=str(torch.backends.cudnn.allow_tf32),
            )
        return info

    # --- tensors ----------------------------------------------------------
    def to_tensor(self, a: np.ndarray, device: str) -> Any:
        torch = self.torch
        if a.dtype.name == "bfloat16":
            t = torch.from_numpy(a.view(np.int16)).view(torch.bfloat16)
        else:
            t = torch.from_numpy(a)
        return t.to(device)

    def to_numpy(self, t: Any) -> tuple[np.ndarray, str]:
        torch = self.torch
        name = str(t.dtype).removeprefix("torch.")
        t = t.detach().cpu().contiguous()
        if t.dtype == torch.bfloat16:
            import ml_dtypes

            return t.view(torch.int16).numpy().view(ml_dtypes.bfloat16), name
        return t.numpy(), name

    def supports(self, case: Case, device: str) -> str | None:
        return invalid_padding_reason(case)

    # --- the call ------------------------------------------------------------
    def translate(self, case: Case) -> tuple[dict[str, Any], list[tuple[int, int]] | None, list[tuple[int, int]] | None, list[str]]:
        """kwargs for F.conv*, an input pad (F.pad pairs) and an output crop, plus notes."""
        geo = case.geometry
        assert geo is not None or case.expect == "invalid"
        kw: dict[str, Any] = {"stride": case.stride, "dilation": case.dilation, "groups": case.groups}
        pre_pad = crop = None
        notes: list[str] = []
        if geo is None:  # invalid case: pass what the user wrote, let torch judge
            if case.same_convention == "torch" or case.padding == "valid" or (
                    case.padding == "same" and all(s == 1 for s in case.stride)):
                kw["padding"] = case.padding  # torch's own string, on a transposed conv too (torch refuses it)
                if case.transpose:
                    kw["output_padding"] = case.output_padding
                return kw, None, None, notes
            pads = stated_pads(case)
            if case.transpose:  # asymmetric pairs: unsupported (invalid_padding_reason)
                kw["padding"] = tuple(p[0] for p in pads)
                kw["output_padding"] = case.output_padding
            elif all(b == a for b, a in pads):
                kw["padding"] = tuple(p[0] for p in pads)
            else:  # as a user writes asymmetric padding: F.pad, then torch judges the VALID conv
                kw["padding"] = 0
                pre_pad = list(pads)
                notes.append("asymmetric padding: F.pad the input, then VALID convolution")
            return kw, pre_pad, None, notes
        if not case.transpose:
            if case.padding == "valid" or (case.padding == "same" and all(s == 1 for s in case.stride)):
                kw["padding"] = case.padding
            elif all(b == a for b, a in geo.pads):
                kw["padding"] = tuple(b for b, _ in geo.pads)
                if case.padding == "same":
                    notes.append("SAME with stride > 1 given as its explicit symmetric padding")
            else:
                kw["padding"] = 0
                pre_pad = list(geo.pads)
                notes.append("asymmetric padding: F.pad the input, then VALID convolution")
            return kw, pre_pad, None, notes
        low = [min(b, a) for b, a in geo.pads]
        kw["padding"] = tuple(low)
        kw["output_padding"] = geo.extend
        if any(b != a for b, a in geo.pads):
            crop = [(b - m, a - m) for (b, a), m in zip(geo.pads, low)]
            notes.append("asymmetric transposed padding: symmetric min(before, after), then crop the rest")
        if case.padding == "same":
            notes.append("SAME given as explicit padding/output_padding (TF crop rule)")
        return kw, None, crop, notes

    def forward(self, case: Case, x: Any, w: Any, b: Any, inputs: Inputs | None = None,
                device: str = "cpu") -> tuple[Any, list[str], list[str]]:
        """y in the case layout from tensors x (case layout), w, b, then the epilogue (its constants
        from `inputs`); the call as lines, and notes. Framework exceptions propagate (the caller
        turns them into Rejected)."""
        import torch.nn.functional as F

        fn_name = f"{case.family}{case.rank}d"
        fn = getattr(F, fn_name)
        kw, pre_pad, crop, notes = self.translate(case)
        c = 0 if case.unbatched else 1  # the channel axis: an unbatched input has no batch axis
        if case.channels_last:
            x = x.movedim(-1, c)  # NC* view with channels-last strides: torch's channels_last format
        call = f"y = F.{fn_name}(x, w, {'b' if b is not None else 'None'}, " + ", ".join(f"{k}={v!r}" for k, v in kw.items()) + ")"
        lines = [f"x = x.movedim(-1, {c})  # channels_last memory format"] if case.channels_last else []
        if pre_pad:
            flat = [v for pair in reversed(pre_pad) for v in pair]
            x = F.pad(x, flat)
            lines.append(f"x = F.pad(x, {flat})")
        y = fn(x, w, b, **kw)
        lines.append(call)
        if crop:
            y = y[(*(slice(None),) * (c + 1), *(slice(cb, y.shape[c + 1 + i] - ca) for i, (cb, ca) in enumerate(crop)))]
            lines.append("y = y[" + ":, " * (c + 1) + ", ".join(f"{cb}:{-ca or None}" for cb, ca in crop) + "]")
        if case.epilogue and inputs is not None:
            consts = {k: self.to_tensor(v, device) for k, v in torch_epilogue.buffers(case, inputs.epilogue).items()}
            for k, v in torch_epilogue.residuals(case, inputs.epilogue).items():
                consts[k] = self.to_tensor(v, device).movedim(-1, 1) if case.channels_last else self.to_tensor(v, device)
            y, more = torch_epilogue.apply(case, y, consts, inputs.epilogue)
            lines += more
        if case.channels_last:
            y = y.movedim(c, -1)
            lines.append(f"y = y.movedim({c}, -1)")
        return y, lines, notes

    def run(self, case: Case, inputs: Inputs, device: str) -> Output:
        torch = self.torch
        x = self.to_tensor(inputs.x, device)
        w = self.to_tensor(inputs.w, device)
        b = None if inputs.b is None else self.to_tensor(inputs.b, device)
        try:
            with torch.no_grad():
                y, lines, notes = self.forward(case, x, w, b, inputs, device)
        except Exception as exc:  # noqa: BLE001 - any framework exception is a finding
            raise Rejected(first_line(exc)) from None
        arr, dtype = self.to_numpy(y)
        tf32 = device == "cuda" and case.dtype == "float32" and bool(torch.backends.cudnn.allow_tf32)
        return Output(arr, dtype, "\n".join(lines), tf32=tf32, notes=notes)

    def run_gradients(self, case: Case, inputs: Inputs, dy: np.ndarray, device: str) -> dict[str, Output]:
        """torch.autograd.grad of y with grad_outputs=dy, for x, w (and b)."""
        torch = self.torch
        leaves = {"grad_input": self.to_tensor(inputs.x, device).requires_grad_(),
                  "grad_weight": self.to_tensor(inputs.w, device).requires_grad_()}
        if inputs.b is not None:
            leaves["grad_bias"] = self.to_tensor(inputs.b, device).requires_grad_()
        try:
            with torch.enable_grad():
                y, lines, notes = self.forward(case, leaves["grad_input"], leaves["grad_weight"], leaves.get("grad_bias"))
                grads = torch.autograd.grad(y, list(leaves.values()), grad_outputs=self.to_tensor(dy, device))
        except Exception as exc:  # noqa: BLE001 - any framework exception is a finding
            raise Rejected(first_line(exc)) from None
        names = ", ".join(("x", "w", "b")[:len(leaves)])
        lines = [f"{names} = (t.requires_grad_() for t in ({names},))", f"leaves = [{names}]", *lines,
                 "grads = torch.autograd.grad(y, leaves, grad_outputs=dy)"]
        tf32 = device == "cuda" and case.dtype == "float32" and bool(torch.backends.cudnn.allow_tf32)
        out = {}
        for (name, _), g in zip(leaves.items(), grads):
            arr, dtype = self.to_numpy(g)
            out[name] = Output(arr, dtype, "\n".join(lines), tf32=tf32, notes=list(notes))
        return out
