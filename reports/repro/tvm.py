"""Reproducer templates for the TVM importer backends, and the pieces every TVM script shares (see
reports/repro/script.py for the script around them; `tvm` and `tvm-bound` are in reports/repro/tvm_relax.py).

Each script builds what the adapter builds (a Relax function, a torch.export'ed module,
a one-node ONNX model, or a TF function through TFLiteConverter) from the adapter's own
pure plan functions (tvm_backend.direct_plan, TvmTorchImportBackend.plan,
TvmOnnxImportBackend.plan + graph_nodes, TvmTfliteImportBackend.plan), then compiles it
from scratch with tvm.compile (never convdiff's compile cache) and runs the Relax VM.
When the record has a translation, the plan's lines must equal it (bar the line saying
whether the library came from the cache), else ReproUnavailable: the adapter changed.
"""

from __future__ import annotations

import textwrap

from backends.base import Backend
from backends.tensorflow.epilogue import Epilogue
from backends.torch.module import epilogue_lines
from backends.tvm.onnx_import import TvmOnnxImportBackend, TvmOnnxOutputShapeBackend
from backends.tvm.plan import canonical_kernel_layout
from backends.tvm.tflite_import import TvmTfliteImportBackend, tf_kernel_layout
from backends.tvm.torch_import import TvmTorchImportBackend
from harness.execution.records import Record
from harness.model.case import Case
from reports.repro.epilogue import assign, constants, residual_names, vector_names
from reports.repro.onnx_model import build_model_source
from reports.repro.registry import ReproUnavailable, register, stale
from reports.repro.torch_module import model_class_source, module_inputs

VM_ARGS_LINE = "y = relax.VirtualMachine(exe, dev)['main']({args})"

# Shared by every TVM script (after its imports): compile from scratch, run the VM on arrays in the case dtype.
RUNNER = '''
TARGET, DEV = ("cuda", tvm.cuda(0)) if DEVICE == "cuda" else ("llvm", tvm.cpu(0))


def case_dtype(a):
    """float64 values (exact in DTYPE) as a C-contiguous DTYPE array (0-d stays 0-d); bfloat16 via ml_dtypes,
    which TVM installs."""
    if DTYPE == "bfloat16":
        import ml_dtypes
        return np.require(a.astype(ml_dtypes.bfloat16), requirements="C")
    return np.require(a.astype(DTYPE), requirements="C")


def compile_and_run(mod, *args):
    """tvm.compile from scratch (convdiff caches the library; this does not), then the Relax VM."""
    vm = relax.VirtualMachine(tvm.compile(mod, target=TARGET), DEV)
    y = vm["main"](*(tvm.runtime.tensor(case_dtype(a), DEV) for a in args))
    if not hasattr(y, "numpy"):  # a one-element tuple
        y = y[0]
    y = y.numpy()
    return y.astype(np.float64), str(y.dtype)
'''


def tvm_imports(*lines: str) -> str:
    """TVM first, then the frontend's framework: the order convdiff's worker imports them in."""
    return "\n".join(["import tvm", "from tvm import relax", *lines]) + "\n"


def check_lines(rec: Record, notes: list[str], lines: list[str], vm_args: str) -> None:
    """Refuse a record whose translation the adapter would no longer write (the cache line aside)."""
    if not rec.translation.strip():
        return  # rejected or never ran: nothing recorded, the current plan is the adapter's call
    recorded = [ln for ln in rec.translation.splitlines() if not ln.startswith("exe = ")]
    now = [*(f"# exact identity: {n}" for n in notes), *lines, VM_ARGS_LINE.format(args=vm_args)]
    if recorded != now:
        raise stale(rec)


def supported(backend: Backend, rec: Record, case: Case) -> None:
    """No script for a case the adapter declines (the harness recorded it as unsupported)."""
    reason = backend.supports(case, rec.device)
    if reason:
        raise ReproUnavailable(f"{rec.backend} does not run this case: {reason}")


def _more(case: Case) -> str:
    """The residual arguments after x (the imported `main` takes them in epilogue order)."""
    return ", *RESIDUALS" if residual_names(case) else ""


def notes_source(notes: list[str]) -> str:
    """The adapter's exact identities as comments, for the reader of the bug report."""
    return "".join(f"# exact identity: {n}\n" for n in notes)


@register("tvm-torch-import")
def tvm_torch_import_template(rec: Record, case: Case) -> str:
    """torch.nn module with the case's weights -> torch.export -> from_exported_program, as plan() says."""
    backend = TvmTorchImportBackend()
    supported(backend, rec, case)
    cls, args, pre_pad, crop, lines, notes = backend.plan(case)
    lines[-1:-1] = epilogue_lines(case, constants(case))  # as the adapter: before the import line
    check_lines(rec, notes, lines, "x")
    model = model_class_source(case, "tvm-torch-import", cls, args, pre_pad, crop)
    made, call = module_inputs(case)
    imports = tvm_imports("from tvm.relax.frontend.torch import from_exported_program", "import torch",
                       "import torch.nn.functional as F")
    return imports + RUNNER + f'''

{notes_source(notes)}{model}

def run_framework(x, w, b):
    """Export, import into Relax, compile and run on {rec.device} (the weights are baked in as constants)."""
    def t(a):  # exact: the values are DTYPE values
        return torch.from_numpy(a).to(getattr(torch, DTYPE))

    model = {made}.eval()
    with torch.no_grad():
        ep = torch.export.export(model, ({call},))
    return compile_and_run(from_exported_program(ep, unwrap_unit_return_tuple=True), x{_more(case)})
'''


@register("tvm-onnx-import")
@register("tvm-onnx-import-output-shape")
def tvm_onnx_template(rec: Record, case: Case) -> str:
    """The checked one-node ONNX model from plan() + graph_nodes(), imported with from_onnx."""
    backend = TvmOnnxOutputShapeBackend() if rec.backend == "tvm-onnx-import-output-shape" else TvmOnnxImportBackend()
    supported(backend, rec, case)
    attrs, lines, notes = backend.plan(case)
    check_lines(rec, notes, lines, "x")
    shapes = backend.input_shapes(case)
    imports = tvm_imports("from tvm.relax.frontend.onnx import from_onnx", "import onnx",
                       "from onnx import helper, numpy_helper")
    return imports + RUNNER + f'''

{notes_source(notes)}{build_model_source(rec.backend, case, attrs)}

def run_framework(x, w, b):
    """Import into Relax, compile and run on {rec.device}."""
    model = build_model(case_dtype(w), None if b is None else case_dtype(b))
    mod = from_onnx(model, shape_dict={shapes!r}, dtype_dict=dict.fromkeys({list(shapes)!r}, DTYPE))
    return compile_and_run(mod, x{_more(case)})
'''


@register("tvm-tflite-import")
def tvm_tflite_template(rec: Record, case: Case) -> str:
    """A tf.function from plan() -> TFLiteConverter -> from_tflite (TF imported after TVM, as in the worker)."""
    backend = TvmTfliteImportBackend()
    supported(backend, rec, case)
    plan, lines, notes = backend.plan(case)
    check_lines(rec, notes, lines, "x")
    r = case.rank
    strides, dil = plan["strides"], plan["dilations"]
    if r == 3:  # conv3d and conv3d_transpose take 5-element strides/dilations
        strides, dil = [1, *strides, 1], [1, *dil, 1]
    body = [] if case.channels_last else [f"x = tf.transpose(x, {[0, *range(2, r + 2), 1]})"]
    if plan["pre_pad"]:
        body.append(f"x = tf.pad(x, {plan['pre_pad']})")
    if not case.transpose:
        body.append(f"y = tf.nn.conv{r}d(x, w, {strides}, {plan['padding']!r}, dilations={dil})")
    else:
        tail = f", dilations={dil}" if r == 3 else ""  # CONV_3D_TRANSPOSE has dilation, TRANSPOSE_CONV none
        body.append(f"y = tf.nn.conv{r}d_transpose(x, w, {plan['output_shape']}, {strides}, {plan['padding']!r}{tail})")
        if plan["crop"]:
            body.append("y = y[:, " + ", ".join(f"{lo}:{hi}" for lo, hi in plan["crop"]) + ", :]")
    if case.bias:
        body.append("y = tf.nn.bias_add(y, b)")
    if case.epilogue:  # the tensorflow backend's tf ops on the N*C result, constants made inside the trace
        body += [*assign(vector_names(case), "tf.constant({}, dtype=tf.float32)"),
                 *Epilogue(case, constants(case)).tf_lines(nc=False)]
    body.append("return y" if case.channels_last else f"return tf.transpose(y, {[0, r + 1, *range(1, r + 1)]})")
    kl = tf_kernel_layout(case)
    perm = [canonical_kernel_layout(case).index(c) for c in kl]
    bias = "\n    b = tf.constant(b.astype(np.float32))" if case.bias else ""
    specs = ", ".join(f"tf.TensorSpec({shape}, tf.float32, name={n!r})" for n, shape in
                      [("x", case.input_shape), *((n, case.output_shape) for n in residual_names(case))])
    imports = "import os\n\n" + tvm_imports("from tvm.relax.frontend.tflite import from_tflite", "import tflite", "",
                                         'os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")', "import tensorflow as tf")
    return imports + RUNNER + f'''

{notes_source(notes)}def build_module(w, b):
    """The TF function convdiff's tvm-tflite-import adapter converts to TFLite, imported with from_tflite."""
    w = tf.constant(np.transpose(w, {perm}).astype(np.float32))  # -> {kl} (TF's filter order){bias}

    @tf.function(input_signature=[{specs}])
    def f({", ".join(["x", *residual_names(case)])}):
{textwrap.indent(chr(10).join(body), " " * 8)}

    buf = tf.lite.TFLiteConverter.from_concrete_functions([f.get_concrete_function()], f).convert()
    return from_tflite(tflite.Model.GetRootAsModel(buf, 0))


def run_framework(x, w, b):
    """Convert, import into Relax, compile and run on {rec.device}."""
    return compile_and_run(build_module(w, b), x{_more(case)})
'''
