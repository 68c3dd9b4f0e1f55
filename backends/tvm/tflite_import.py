"""TVM via its TFLite importer: a tf.function -> TFLiteConverter flatbuffer -> from_tflite.

The successor of the TensorFlow importer whose SAME conv2d_transpose once worked
only for 1x1 kernels. TFLite convolutions are channels-last; TensorFlow and TVM
were checked to share one process (either import order), so the conversion runs
in the worker, and only on a compile-cache miss (a warm run never imports TF).
float32 only. Canonical padding is expressed the TF way: SAME/VALID natively;
explicit conv padding as tf.pad then VALID; explicit transposed padding as VALID
with output_shape = full + output_padding, then a crop: both exact identities.
Refusals are stated as the chain's own: 1-D/2-D TRANSPOSE_CONV has no dilation (the converter leaves
a dilated Conv2DBackpropInput to TF Select; CONV_3D_TRANSPOSE has dilation), and a grouped 1-D/2-D
transpose converts to a TRANSPOSE_CONV whose filter the importer refuses.
The epilogue is part of the TF function (backends/tensorflow/epilogue.py's tf ops, on the N*C result
before any transpose back), so the converter folds and fuses it as it would a user's model;
residuals are further inputs of the function, hence of the imported `main`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from backends.base import Capabilities, Output, Rejected, first_line
from backends.digest import baked_arrays_digest
from backends.litert.interpreter import converter_message
from backends.pads import explicit_pads
from backends.tensorflow.epilogue import TF_EPILOGUE_OPS, Epilogue, residual_names
from backends.tensorflow.util import TF_EXCLUDES
from backends.tvm.direct import TvmBase
from backends.tvm.plan import SPATIAL, canonical_kernel_layout, relayout
from harness.model.case import Case
from harness.numerics.inputs import Inputs

CONV = {1: "tf.nn.conv1d", 2: "tf.nn.conv2d", 3: "tf.nn.conv3d"}
TCONV = {1: "tf.nn.conv1d_transpose", 2: "tf.nn.conv2d_transpose", 3: "tf.nn.conv3d_transpose"}


def tf_kernel_layout(case: Case) -> str:
    """TF filters: conv (*k, I/g, O); conv_transpose (*k, O, I)."""
    s = SPATIAL[case.rank]
    return f"{s}OI" if case.transpose else f"{s}IO"


class TvmTfliteImportBackend(TvmBase):
    """TF convolution -> TFLite -> tvm.relax.frontend.tflite.from_tflite."""
    preload = ("tensorflow", "tvm", "tflite")  # the flatbuffer reader and the TFLite converter (imported before the fork)
    excludes = TF_EXCLUDES

    name = "tvm-tflite-import"
    model_sources = ("backends.tensorflow.epilogue", "backends.tensorflow.util", "backends.litert.interpreter")  # what writes the imported model (source_digest)
    epilogue_ops = TF_EPILOGUE_OPS  # tf ops in the converted function
    capabilities = Capabilities(
        padding=("same", "valid"),
        padding_identities=("explicit conv padding: tf.pad then VALID",
                            "explicit transposed padding: VALID with output_shape = full + output_padding, then crop"),
        output_padding="via output_shape",
        dilation="conv, transpose3d; transpose1d/2d: none (TRANSPOSE_CONV has no dilation)",
        groups="conv1d, conv2d",
        layouts=("channels_last", "channels_first: tf.transpose around the op (exact permutation)"),
        dtypes=("float32",),
    )

    def prepare(self, cases: list[Case], device: str) -> dict[str, int]:
        """The cases' builds in batches, without the runs their relations derive (no `inputs` parameter: see
        Backend.prepare). What a model costs here is its TF -> TFLite conversion, which a batch does not share, so
        converting the derived runs ahead saves nothing, and converts those of cases the importer then refuses
        (12 worker-s one by one against 50 ahead on 12 nightly cases, bench/nightly_ab.py, 2026-11-29)."""
        return super().prepare(cases, device)

    def supports(self, case: Case, device: str) -> str | None:
        if case.dtype != "float32":
            return f"TFLiteConverter float path is float32 only (case is {case.dtype})"
        if case.op == "conv_transpose3d" and case.groups > 1:
            return "grouped conv3d_transpose: tf.nn.conv3d_transpose has no groups"
        if case.transpose and case.groups > 1:  # measured: the filter O/g converts, the importer asserts
            return ("TFLite TRANSPOSE_CONV has no groups: TFLiteConverter writes the grouped filter and the "
                    "TVM importer refuses it (AssertionError: Output channel in the filter should match to "
                    "channel in the output_shape)")
        if case.rank == 3 and case.groups > 1:
            return "TFLiteConverter has no grouped CONV_3D ('tf.Conv3D' op is neither a custom op nor a flex op)"
        if case.transpose and case.rank < 3 and any(d > 1 for d in case.dilation):
            return ("TFLite TRANSPOSE_CONV has no dilation: TFLiteConverter leaves a dilated "
                    "tf.Conv2DBackpropInput to TF Select (CONV_3D_TRANSPOSE has dilation)")
        if case.groups < 1 or case.in_channels % case.groups or case.out_channels % case.groups:
            return ("TF's convolutions have no groups argument (groups = input depth / filter depth): a groups value "
                    "below 1 or not dividing the channels cannot be stated")
        if case.geometry is None and case.transpose:
            return "an invalid transposed case has no TF output_shape to state"
        return None

    def plan(self, case: Case) -> tuple[dict[str, Any], list[str], list[str]]:
        """The TF call's arguments, the translation lines and the identity notes."""
        pads, extend = explicit_pads(case)  # an invalid (forward) case's as it states them
        r, notes = case.rank, []
        lines = [] if case.channels_last else ["x = tf.transpose(x, N*C)"]
        if not case.channels_last:
            notes.append("channels_first: tf.transpose to N*C and back (TFLite convolutions are N*C only)")
        plan: dict[str, Any] = {"pre_pad": None, "crop": None, "strides": list(case.stride),
                                "dilations": list(case.dilation)}
        if case.padding in ("same", "valid"):
            plan["padding"] = case.padding.upper()
        else:
            plan["padding"] = "VALID"
        if not case.transpose:
            if plan["padding"] == "VALID" and any(b or a for b, a in pads):
                plan["pre_pad"] = [[0, 0], *map(list, pads), [0, 0]]
                notes.append("explicit padding: tf.pad then VALID convolution")
                lines.append(f"x = tf.pad(x, {plan['pre_pad']})")
            lines.append(f"y = {CONV[r]}(x, w, strides={plan['strides']}, padding={plan['padding']!r}, "
                         f"dilations={plan['dilations']})  # w {tf_kernel_layout(case)}")
        else:
            full = [(n - 1) * s + d * (k - 1) + 1
                    for n, s, d, k in zip(case.input_size, case.stride, case.dilation, case.kernel_size)]
            if case.padding == "same":
                size = [n * s for n, s in zip(case.input_size, case.stride)]
            else:
                size = [f + e for f, e in zip(full, extend)]
                if any(b or a for b, a in pads):
                    plan["crop"] = list(pads)
                    notes.append("explicit transposed padding: VALID with output_shape = full + output_padding, "
                                 "then crop the padding")
            plan["output_shape"] = [case.batch, *size, case.out_channels]
            dil = f", dilations={plan['dilations']}" if r == 3 else ""  # 1-D/2-D: none (see supports)
            lines.append(f"y = {TCONV[r]}(x, w, output_shape={plan['output_shape']}, strides={plan['strides']}, "
                         f"padding={plan['padding']!r}{dil})  # w {tf_kernel_layout(case)}")
            if plan["crop"]:
                lines.append("y = y[:, " + ", ".join(f"{b}:{f + e - a}" for (b, a), f, e in
                                                      zip(plan["crop"], full, extend)) + ", :]")
                plan["crop"] = [(b, f + e - a) for (b, a), f, e in zip(plan["crop"], full, extend)]
        if case.bias:
            lines.append("y = tf.nn.bias_add(y, b)")
        if case.epilogue:
            lines.append(f"y = epilogue({', '.join(case.epilogue)})  # tf ops on N*C y, as the tensorflow backend "
                         "writes them; residuals are inputs of f")
        if not case.channels_last:
            lines.append("y = tf.transpose(y, NC*)")
        lines.append("buf = tf.lite.TFLiteConverter.from_concrete_functions([f.get_concrete_function()], f).convert()")
        lines.append("mod = from_tflite(tflite.Model.GetRootAsModel(buf, 0))")
        return plan, lines, notes

    def flatbuffer(self, case: Case, inputs: Inputs, plan: dict[str, Any]) -> bytes:
        """Convert the case's TF function to TFLite (TensorFlow imported here, on a cache miss)."""
        import tensorflow as tf

        r = case.rank
        w = tf.constant(relayout(inputs.w, canonical_kernel_layout(case), tf_kernel_layout(case)))
        b = None if inputs.b is None else tf.constant(inputs.b)
        to_last, to_first = [0, *range(2, r + 2), 1], [0, r + 1, *range(1, r + 1)]
        strides, dil = plan["strides"], plan["dilations"]
        if r == 3:  # conv3d and conv3d_transpose take 5-element strides/dilations
            strides, dil = [1, *strides, 1], [1, *dil, 1]

        names = residual_names(case)

        def body(x: Any, *residuals: Any) -> Any:
            if not case.channels_last:
                x = tf.transpose(x, to_last)
            if plan["pre_pad"]:
                x = tf.pad(x, plan["pre_pad"])
            if not case.transpose:
                fn = {1: tf.nn.conv1d, 2: tf.nn.conv2d, 3: tf.nn.conv3d}[r]
                y = fn(x, w, strides, plan["padding"], dilations=dil)
            else:
                fn = {1: tf.nn.conv1d_transpose, 2: tf.nn.conv2d_transpose, 3: tf.nn.conv3d_transpose}[r]
                y = fn(x, w, plan["output_shape"], strides, plan["padding"], **({"dilations": dil} if r == 3 else {}))
                if plan["crop"]:
                    y = y[(slice(None), *(slice(lo, hi) for lo, hi in plan["crop"]), slice(None))]
            if b is not None:
                y = tf.nn.bias_add(y, b)
            if case.epilogue:
                y, _ = Epilogue(case, inputs.epilogue, dict(zip(names, residuals))).apply_tf(tf, y, nc=False)
            return y if case.channels_last else tf.transpose(y, to_first)

        specs = [tf.TensorSpec(case.input_shape, tf.as_dtype(inputs.x.dtype), name="x"),  # an invalid case's own dtype
                 *(tf.TensorSpec(case.output_shape, tf.float32, name=n) for n in names)]
        fn = tf.function(body, input_signature=specs, autograph=False)
        converter = tf.lite.TFLiteConverter.from_concrete_functions([fn.get_concrete_function()], fn)
        return converter.convert()

    def run(self, case: Case, inputs: Inputs, device: str) -> Output:
        plan, lines, notes = self.plan(case)
        key = self.key(case, device, epilogue=list(case.epilogue), weights=baked_arrays_digest(case, inputs)[:24])
        residuals = [np.ascontiguousarray(c["r"]) for op, c in zip(case.epilogue, inputs.epilogue) if op == "residual"]

        def make_mod() -> Any:
            import tflite
            from tvm.relax.frontend.tflite import from_tflite

            try:
                buf = self.flatbuffer(case, inputs, plan)
            except Exception as exc:  # noqa: BLE001 - TF or its converter refused: a finding
                raise Rejected("TFLiteConverter: " + converter_message(exc)) from None
            try:
                return from_tflite(tflite.Model.GetRootAsModel(buf, 0))
            except Exception as exc:  # noqa: BLE001 - the importer refused: a finding
                raise Rejected(first_line(exc)) from None

        vm, how = self.compile_cached(key, device, make_mod)
        arr, dtype = self.invoke(vm, [np.ascontiguousarray(inputs.x), *residuals], device)
        lines += [how, "y = relax.VirtualMachine(exe, dev)['main'](x)"]
        return Output(arr, dtype, "\n".join(lines), notes=notes)
