"""Reproducer template for `iree` (see reports/repro/script.py for the script around it).

The script builds the adapter's ONNX model from the shared builder's pure functions (backends/onnx/model.py
through reports/repro/onnx_model.py), writes it as model.onnx and runs IREE's three steps as a user does:
the `iree-import-onnx` tool, the `iree-compile` tool with the adapter's flags (llvm-cpu, the host CPU as
target), and the IREE runtime on the .vmfb. It prints the tools' version and the CPU `host` resolved to
(read from iree-compile's dump of its configured executables); a tool that fails or dies by a signal is
a refusal, printed as its first error line.

Quantized records (reports/repro/quant.py dispatches them here through IREE_QUANT_TEMPLATES): the same three
steps on the quantized model the adapter builds (`iree`: the QDQ form; `iree-qlinear`: one QLinearConv node),
written by reports/repro/quant_onnx.py's model source, the uint8 result reinterpreted from the int8 the
runtime returns as the adapter does; the script prints each dispatch iree-compile made (an integer
convolution is named ..._conv_..._i8xi8xi32) and judges in units of y.
"""

from __future__ import annotations

from collections.abc import Callable

from backends.iree.backend import IreeBackend, IreeQLinearBackend
from backends.iree.compile import TARGET_FLAGS
from backends.iree.runtime import DRIVER
from backends.onnx.model import dtype_reason, epilogue_lines, node_attributes
from harness.execution.records import Record
from harness.model.case import Case
from reports.repro.epilogue import residual_names
from reports.repro.onnx_model import build_model_source
from reports.repro.quant_lines import require_in
from reports.repro.quant_onnx import model_source
from reports.repro.registry import ReproUnavailable, register, stale

RUNNER = r'''
FLAGS = {flags!r}


def case_dtype(a):
    return np.ascontiguousarray(a.astype(DTYPE))  # exact: the values are DTYPE values


class Crashed(RuntimeError):
    """A tool that died by a signal: a crash, not a refusal."""


def tool(cmd):
    """Run one IREE tool; its first error line raised as a refusal, the signal that killed it as Crashed."""
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode < 0:  # its assertion or error, else the innermost stack frame in torch-mlir's or IREE's code
        frames = [ln.split(maxsplit=2)[-1].split("(")[0] for ln in done.stderr.splitlines()
                  if ln.lstrip().startswith("#") and ("mlir::torch::" in ln or "mlir::iree_compiler::" in ln)]
        said = next((ln for ln in done.stderr.splitlines() if "Assertion" in ln or "error:" in ln), "")
        raise Crashed(f"{{os.path.basename(cmd[0])}} crashed (signal {{-done.returncode}}): "
                           + (said or (f"in {{frames[0]}}" if frames else "")))
    if done.returncode != 0:
        errors = [ln.split("error:", 1)[1].strip() for ln in done.stderr.splitlines() if "error:" in ln]
        raise RuntimeError(errors[0] if errors else done.stderr.strip()[:300] or f"exit {{done.returncode}}")
    return done.stdout


def run_iree(model, x, *more):
    """model.onnx -> iree-import-onnx -> iree-compile (llvm-cpu, host CPU) -> the IREE runtime ({driver})."""
    bin_dir = os.path.dirname(sys.executable)
    compile_tool = find_tool("iree-compile")
    print(tool([compile_tool, "--version"]).strip().splitlines()[1].strip())
    model.graph.name = "main"  # the function's name in the compiled module
    with tempfile.TemporaryDirectory() as tmp:
        path = lambda name: os.path.join(tmp, name)  # noqa: E731
        onnx.save(model, path("model.onnx"))
        tool([os.path.join(bin_dir, "iree-import-onnx"), path("model.onnx"), "-o", path("model.mlir")])
        tool([compile_tool, path("model.mlir"), *FLAGS, "--iree-hal-dump-executable-configurations-to=" + path("dump"),
              "-o", path("model.vmfb")])
        dispatches = []
        for i, name in enumerate(sorted(os.listdir(path("dump")))):
            text = open(os.path.join(path("dump"), name)).read()
            if i == 0:
                print("IREE target cpu:", text.split('cpu = "', 1)[1].split('"', 1)[0] if 'cpu = "' in text else "?")
            dispatches += [d.split("$async_")[-1] for d in re.findall(r"func\.func @([\w$]+)\(\)", text)]
        print("IREE dispatches:", ", ".join(dispatches))
        module = ireert.load_vm_flatbuffer_file(path("model.vmfb"), driver={driver!r})
        y = module.main(*(case_dtype(a) for a in (x, *more)))
        y = np.asarray(y.to_host() if hasattr(y, "to_host") else y)
    if DTYPE == "uint8" and y.dtype == np.int8:
        print("the IREE runtime returned the uint8 output as int8 (the compiled function's i8 is signless): "
              "y.view(np.uint8)")
        y = y.view(np.uint8)
    return y, str(y.dtype)
'''


@register("iree")
def iree_template(rec: Record, case: Case) -> str:
    """The hand-built node through iree-import-onnx, iree-compile and the IREE runtime."""
    if case.dtype == "bfloat16":
        raise ReproUnavailable("no standalone script for a bfloat16 model on iree (NumPy has no bfloat16 type, "
                               "onnx.numpy_helper none either); the record's translation shows the calls")
    reason = dtype_reason(case)
    if reason:
        raise ReproUnavailable(f"iree does not run this case: {reason}")
    recorded = {ln.strip() for ln in rec.translation.splitlines()}
    key = "iree-compile model.mlir " + " ".join(TARGET_FLAGS) + " -o model.vmfb"
    if rec.translation.strip() and (key not in recorded or not all(ln in recorded for ln in epilogue_lines(case))):
        raise stale(rec)
    attrs, _ = node_attributes(case)
    more = ", *RESIDUALS" if residual_names(case) else ""
    return (IMPORTS + RUNNER.format(flags=list(TARGET_FLAGS), driver=DRIVER) + "\n"
            + build_model_source(rec.backend, case, attrs) + f'''

def run_framework(x, w, b):
    model = build_model(case_dtype(w), None if b is None else case_dtype(b))
    y, dtype = run_iree(model, x{more})
    return y.astype(np.float64), dtype
''')


IMPORTS = ("import os\nimport re\nimport subprocess\nimport tempfile\n\nimport iree.runtime as ireert\nimport onnx\n"
           "from iree.compiler.tools.binaries import find_tool\nfrom onnx import helper, numpy_helper\n")


def iree_quant_template(rec: Record, case: Case) -> str:
    """The quantized model (the adapter's form) through iree-import-onnx, iree-compile and the IREE runtime."""
    backend = IreeQLinearBackend() if rec.backend == "iree-qlinear" else IreeBackend()
    reason = backend.supports(case, rec.device)
    if reason:
        raise ReproUnavailable(f"{rec.backend} does not run this case: {reason}")
    _, lines, _ = backend.plan(case)
    require_in(rec, lines)  # the form's model lines, the three steps, the uint8 reinterpretation
    form = backend.form(case)
    return "\n" + IMPORTS + RUNNER.format(flags=list(TARGET_FLAGS), driver=DRIVER) + model_source(rec, case, form) + \
        '''

def run_framework(x, w, b):
    """The three IREE steps on the model; the runtime's result as the case dtype (requantization: QuantizeLinear's
    round half to even)."""
    y, dtype = run_iree(build_model(w, b), x)
    return y, dtype, "half_to_even"
'''


IREE_QUANT_TEMPLATES: dict[str, Callable[[Record, Case], str]] = {"iree": iree_quant_template,
                                                                  "iree-qlinear": iree_quant_template}
