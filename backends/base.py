"""The one small interface every backend implements: convdiff's public adapter contract.

An adapter is a subclass of `Backend`, registered under the entry point group `convdiff.backends`
(`name = "module:Class"` in its distribution's pyproject.toml) or named on the command line as
`module:Class`. It imports its framework lazily, in `setup()`, inside the worker process that runs it:
the harness itself never imports a framework. docs/guide/adapters.md walks through a complete one.

The contract, versioned by API_VERSION (major: a change that breaks adapters; minor: an addition):
- `Backend`: the class attributes `framework`, `distribution`, `capabilities`, `epilogue_ops`, `quantized`,
  `builds_per_case`, `preload`, `excludes`; the methods `setup`, `device_reason`, `supports`,
  `epilogue_reason`, `run` (and optionally `run_gradients`, `prepare`, `host_facts`, `fingerprint`,
  `version`, `unavailable_reason`, `set_threads`, `thread_count`). `name` is set from the registration.
- 1.1 added `set_threads(n)` and `thread_count()` (the `threads` relation): an adapter that does not
  override them has no thread setting, and the relation says so.
- 1.1 also added `Output.path` and `Rejected(message, path)`: which of the adapter's routes ran, where it has
  several (a known issue may select on it).
- 1.2 added `Capabilities.unbatched` and `Capabilities.torch_same`, and `input_reason(case)`, which the worker
  asks before `supports()`: an unbatched case, or torch's padding='same' where it is not TensorFlow's, is
  declared unsupported on an adapter whose capabilities do not say it states them.
- 1.3 added `Crashed`: a process the adapter runs for the framework (a compiler, a converter's tool) died by a
  signal on the case; recorded as `crash`, like the worker's own death, though the worker lives on.
- 1.4 added `kernel_variants(host)` and `use_kernel_variant(name)` (`KernelVariant`): the framework's own
  switches between kernels for the same precision (graph optimisation off, XNNPACK off, oneDNN off), each run
  in a worker of its own for the `layout` relation; an adapter that does not override them has none, and the
  relation's record says so.
- `run(case, inputs, device) -> Output`, or raise `Unsupported` (the adapter cannot express the case)
  or `Rejected` (the framework raised on it: `raise Rejected(first_line(exc)) from exc`). It is called for
  every case `supports()` accepts, `expect: invalid` cases included. Any other exception is recorded as
  `error`, with `error_origin` saying whose: "adapter" when the adapter's own code raised it (the message
  ends with its file and line), "convdiff" for an internal failure. Running out of memory (MemoryError,
  even wrapped in Rejected) is recorded as a `crash`, never as a refusal (harness/execution/failures.py).
- `Case` (harness.model.case): the canonical case, PyTorch's semantics, read-only. `case.geometry` holds what
  a valid case resolves to (explicit padding pairs, output size, a transposed case's tail) and is **None for
  an `expect: invalid` case**, which has no valid convolution to resolve. An adapter hands such a case's
  parameters to its framework as the case states them (`case.padding`: explicit pairs, or "same" / "valid"),
  for the framework to refuse; where its framework's API can only take what the geometry resolves, it
  raises `Unsupported` saying so. An invalid case may also state a weight of another shape (`case.weight_shape`,
  any rank), per-tensor dtypes (`case.tensor_dtypes`: integer, complex or mixed) and values no convolution has
  (stride, dilation or groups below 1, negative padding): `inputs` hold exactly those tensors, and run() hands
  them and the values to the framework unchanged, never casting, reshaping or clamping them (a layout permutation
  the weight's rank does not allow is left out); the framework's refusal, at the op or where its API first
  meets the input, is the answer. `case.unbatched` (valid or not): x and the output have no batch axis.
  `Inputs` (harness.numerics.inputs): x in the case layout, w in the
  canonical weight layout, b, the epilogue's constants, a quantized case's parameters.
- `first_line(exc)`: an exception's first line, as records show it.
An adapter checks the contract it was written against with `require_api(1)`.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from harness.model.case import FLOAT_DTYPES, LAYOUTS, OPS, Case
from harness.numerics.inputs import Inputs, make_inputs

HostFact = str | int | float | bool | list[str]

API_VERSION = (1, 4)


def require_api(major: int, minor: int = 0) -> None:
    """For an adapter's module: fail at import, with the reason, when this convdiff's adapter contract is not
    the `major` version it was written for, or older than `minor` within it."""
    if API_VERSION[0] != major or API_VERSION[1] < minor:
        have = ".".join(map(str, API_VERSION))
        raise ImportError(f"this adapter needs convdiff's adapter API {major}.{minor} (backends/base.py), "
                          f"but the installed convdiff has {have}")


class Unsupported(Exception):
    """The adapter cannot express this case natively; the message says which feature is missing."""


class Rejected(Exception):
    """The framework itself raised on the call; the message is its first line. `path`: the adapter's route
    that raised (as Output.path), for an adapter with more than one."""

    def __init__(self, message: str = "", path: str = "") -> None:
        super().__init__(message)
        self.path = path


class Crashed(Exception):
    """A process the adapter started for the framework (iree-compile, a converter's tool) died by a signal on this
    case: the framework crashed, though the worker did not. The message names the tool, the signal and its last
    words ("iree-compile crashed (SIGSEGV): in mlir::...")."""


class RememberedCrash(Exception):
    """Building this case's artefact killed its worker in an earlier run, under the same cache key
    (backends/artifacts.py): the case is reported as that crash again, without building it again."""


@dataclass
class Output:
    array: np.ndarray          # in the case layout, storage dtype as in harness.numerics.inputs
    dtype: str                 # canonical name of the dtype the framework returned
    translation: str           # the framework call(s) made, as a user would write them
    tf32: bool = False         # whether TF32 products may have been used (CUDA)
    notes: list[str] = field(default_factory=list)  # exact identities used, if any
    # quantized cases: the requantization rounding the kernel declares (harness.numerics.bound.QUANT_ROUNDING)
    quant_rounding: str = "half_to_even"
    # which of the adapter's routes ran, for one with several ("" = its direct call): e.g. TensorFlow's
    # "valid-pad-crop" (a VALID transpose, then pad and crop). The record keeps it; a known issue's
    # selector may name it (`path:`), since a bug on one route is not on another.
    path: str = ""


@dataclass(frozen=True)
class KernelVariant:
    """One of a framework's own switches that picks other kernels for the same computation at the same
    precision (graph optimisation off, the XNNPACK delegate off, oneDNN off), which the `layout` relation runs
    against the default in a worker of its own (Backend.use_kernel_variant)."""

    name: str     # as a user writes the setting: "ORT_DISABLE_ALL", "TF_ENABLE_ONEDNN_OPTS=0"
    setting: str  # what it changes, in the framework's words (a record's message and the docs show it)
    # variables the framework reads at import: the variant's worker is a fresh interpreter started with them
    # (never forked from a process that imported the framework without them)
    env: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Capabilities:
    """What an adapter expresses natively, declared next to the code that does it.

    `convdiff backends --capabilities` prints these; `supports()` should agree with them.
    """

    ops: tuple[str, ...] = OPS
    padding: tuple[str, ...] = ("symmetric", "asymmetric", "same", "valid")  # passed natively
    padding_identities: tuple[str, ...] = ()  # forms expressed by an exact identity instead
    output_padding: str = "native"            # native | via output_shape | via output_size | none
    dilation: str = "conv, transpose"
    groups: str = "conv, transpose"
    layouts: tuple[str, ...] = LAYOUTS
    dtypes: tuple[str, ...] = FLOAT_DTYPES  # quantized dtypes: Backend.quantized
    devices: tuple[str, ...] = ("cpu", "cuda")
    gradients: str = "none"                   # how run_gradients differentiates (e.g. "autograd"), or none
    # Since 1.2: run() hands the framework an unbatched input (no batch axis) as it is, and the framework's
    # convolution takes that form (torch's does; TensorFlow's, ONNX's and most others need the batch axis).
    unbatched: bool = False
    # Since 1.2: run() passes torch's padding='same' as such (same_convention: torch), so the framework itself
    # decides a stride > 1 or a transposed conv with it; elsewhere `same` is TensorFlow's.
    torch_same: bool = False


class Backend:
    """Subclass per framework; override what differs."""

    capabilities = Capabilities()

    name: str = ""
    framework: str = ""              # importable module name, also the distribution probe
    # Heavy modules run() imports besides `framework` (an exporter, a converter, a second framework): the
    # worker's zygote imports them too, in this order (after `framework`, or where this names it), so that
    # neither a worker's start nor its restart after a crash pays their import again
    # (harness/execution/zygote.py); an order that begins with another backend's whole list lets the zygote
    # fork from that one's (harness/execution/preloads.py). "module:function": import the module and call the
    # function once in the zygote (a warm-up each fork would otherwise repeat). Neither may leave a thread behind
    # that a worker's work would wait on: a fork copies only the forking thread, so a child that needs a lock or a
    # pool held by another thread hangs (measured 2026-11-28: one XNNPACK lowering as ExecuTorch's warm-up left two
    # threads running, and workers forked after it hung in a futex wait); warm such a path up in setup() instead.
    preload: tuple[str, ...] = ()
    # Modules only a run that differentiates needs (torch.autograd.grad imports torch's symbolic shapes at its first
    # call): the zygote imports them after `preload` where the run judges gradients (`convdiff run --gradients`,
    # pytest), and a run without leaves them to the worker that meets a gradient case (preloads.for_gradients)
    gradient_preload: tuple[str, ...] = ()
    # Packages that importing `framework` pulls in only because they are installed, and that run() never
    # uses: blocked in the worker (harness/execution/worker.py `block`: `import m` then raises ImportError,
    # which those imports catch), so that the worker holds one framework and does not pay their import.
    # TensorFlow imports jax when it is installed (tf.lite's jax converter, ~1 s) and keras imports
    # matplotlib.pyplot (its plotting helpers, ~1.2 s); paddle imports tvm_ffi, which imports torch (~2 s).
    excludes: tuple[str, ...] = ()
    distribution: str = ""           # PyPI distribution for the version (default: framework)
    devices: tuple[str, ...] = ("cpu", "cuda")
    test_only: bool = False
    epilogue_ops: tuple[str, ...] = ()  # the epilogue ops run() applies after the conv (harness.model.case.EPILOGUE_OPS)
    quantized: str = ""  # how run() runs a quantized (uint8/int8) case, e.g. "torch.ao quantized modules"; "" = it cannot
    # True where each case pays an export, conversion or compile (cached on disk, but paid cold):
    # `convdiff run --compiled-sample N` runs these on a fixed 1/N of the cases (harness.commands.selection.in_sample)
    builds_per_case: bool = False
    # > 0 where prepare() builds that many cases' models at once (the worker calls it before the run)
    batch_size: int = 0
    # A known-issues file shipped with the adapter (relative to its module's directory): its entries apply to
    # every run of this backend, after the user's --known-issues files and before convdiff's own database.
    known_issues_file: str = ""

    def known_issues_path(self) -> Path | None:
        """The absolute path of `known_issues_file`, or None."""
        if not self.known_issues_file:
            return None
        module = sys.modules.get(type(self).__module__)
        here = Path(module.__file__).parent if module is not None and module.__file__ else Path.cwd()
        return here / self.known_issues_file

    def version(self) -> str:
        try:
            return importlib.metadata.version(self.distribution or self.framework)
        except importlib.metadata.PackageNotFoundError:
            return "unknown"

    def unavailable_reason(self) -> str | None:
        """Cheap check without importing the framework."""
        if importlib.util.find_spec(self.framework) is None:
            return f"{self.framework} is not installed (pip install 'convdiff[{self.framework}]')"
        return None

    # --- called inside the worker only -----------------------------------
    def setup(self, device: str) -> None:
        """Import the framework and prepare the device; raise to mark it unavailable."""

    def device_reason(self, device: str) -> str | None:
        """Why this device cannot run here (None when it can). Runs in the worker."""
        return None if device == "cpu" else f"{self.name} has no {device} path"

    def fingerprint(self, device: str) -> dict[str, str]:
        return {"version": self.version()}

    def host_facts(self, device: str) -> dict[str, HostFact]:
        """What this framework, live in this process, decided from the host (never guessed from env).

        Keys are the names listed in `harness.execution.host.FACTS` (e.g. `tf_onednn`, `torch_cpu_capability`);
        known_issues.yaml selects on them with `host:`. Plain values only: str, int, float, bool, list[str].
        """
        return {}

    def supports(self, case: Case, device: str) -> str | None:
        """None, or the reason this adapter cannot express the case natively."""
        return None

    def epilogue_reason(self, case: Case) -> str | None:
        """Why run() cannot apply this case's epilogue or run it quantized (None when it can)."""
        if case.quantized and not self.quantized:
            return f"{self.name} has no quantized ({case.dtype}) convolution path"
        missing = [op for op in dict.fromkeys(case.epilogue) if op not in self.epilogue_ops]
        if missing:
            return f"{self.name} does not run the epilogue op(s) {', '.join(missing)} (this adapter applies: {', '.join(self.epilogue_ops) or 'none'})"
        return None

    def input_reason(self, case: Case) -> str | None:
        """Why run() cannot hand the framework this case's input as the case states it (None when it can),
        from `capabilities`: an unbatched input where the framework's convolution takes a batch axis only, or
        torch's padding='same' where it differs from TensorFlow's (a stride > 1, a transposed conv) on a
        framework that spells SAME TensorFlow's way. The worker asks it before supports()."""
        if case.unbatched and not self.capabilities.unbatched:
            return f"{self.name}: {self.framework}'s convolution takes an input with a batch axis only (no unbatched form)"
        if case.same_convention == "torch" and not self.capabilities.torch_same and (
                case.transpose or any(s > 1 for s in case.stride)):
            return (f"{self.name}: torch's padding='same' with a stride > 1 or on a transposed conv has no "
                    f"{self.framework} spelling (its SAME is TensorFlow's, defined for any stride)")
        return None

    def run(self, case: Case, inputs: Inputs, device: str) -> Output:
        raise NotImplementedError

    def set_threads(self, n: int) -> None:
        """Run every later call on `n` threads, through the framework's own setting (torch.set_num_threads, a
        session option, an environment variable the framework reads at first use, ...). The worker calls it
        before setup() in a process started for the `threads` relation; raise Unsupported with the reason
        where the framework has no such setting."""
        raise Unsupported(f"{self.name} sets no thread count (its adapter has no set_threads)")

    def thread_count(self) -> int | None:
        """The thread count in effect once setup() ran (the framework's default when set_threads was not
        called), read from the framework where it says; None when unknown."""
        return None

    def kernel_variants(self, host: dict[str, HostFact]) -> tuple[KernelVariant, ...]:
        """The framework's switches to other kernels at the same precision, besides its default (the `layout`
        relation runs each against it). Called in the controller, which never imports the framework, with the
        host facts the target's main worker read live (host_facts), so that a variant can be the other side of
        what the framework decided (oneDNN off where it chose on). Raise Unsupported with the reason where the
        framework has no such switch, or the adapter none it can apply."""
        raise Unsupported(f"{self.name} declares no kernel variants (its adapter has no kernel_variants)")

    def use_kernel_variant(self, name: str) -> None:
        """Run every later call with the kernel variant `name` (one of kernel_variants()). The worker calls it
        before setup() in a process started for that variant, with the variant's env already set; raise
        Unsupported with the reason where it cannot apply here."""
        raise Unsupported(f"{self.name} has no kernel variant {name!r}")

    def stale_after_refusal(self, case: Case) -> bool:
        """Whether refusing `case` may leave state in this process that changes later runs (paddle-inference
        applies a refused model's fused activation to the next predictor's conv): the worker that refused it is
        then replaced by a fresh one before the next case."""
        return False

    def stale_after_run(self, case: Case) -> bool:
        """Whether running `case` may leave this process broken for later cases even when it answers: a kernel that
        writes past its output buffer (torch-ao-qnnpack's ConvTranspose3d) corrupts the heap, and a later case's
        allocation then aborts or reads garbage. The worker that ran it is replaced before the next case, so that
        damage costs no other case's result."""
        return False

    def prepare(self, cases: list[Case], device: str, inputs: list[Inputs] | None = None) -> dict[str, int]:
        """Build ahead, `batch_size` cases at a time, what run() will build per case (one compiled
        module for many cases, stored in the adapter's cache), so that run() finds it built. run()
        must return the same either way; a failed or crashed prepare only costs the time. Counts.
        `inputs[i]`: the data cases[i] will run with (given_inputs: make_inputs(case) where None). An
        adapter whose prepare takes `inputs` is also handed the runs the metamorphic relations derive
        from the cases (other batch sizes, layouts, scaled data: harness/execution/ahead.py); one
        without the parameter gets the cases alone."""
        return {}

    def run_gradients(self, case: Case, inputs: Inputs, dy: np.ndarray, device: str) -> dict[str, Output]:
        """The backward pass of y = op(x, w) + b for the upstream gradient `dy` (`inputs.dy`).

        Returns a dict with one entry per name in `case.gradient_outputs` (`grad_input`: the
        shape and layout of x; `grad_weight`: of w, canonical layout; `grad_bias`: (C_out,)),
        each computed by the framework's own differentiation in the case dtype. Raise
        Unsupported (the framework cannot differentiate this case) or Rejected (it raised on a
        valid case) for all of them; for one gradient alone, put the exception instance in its
        entry instead of an Output. Called only when `case.gradients`; the forward ran first.
        """
        raise Unsupported(f"{self.name}: this adapter has no gradient path (capabilities: gradients none)")


def given_inputs(cases: list[Case], inputs: list[Inputs] | None) -> Iterator[tuple[Case, Inputs]]:
    """Each case of a prepare with the data it will run with: `inputs[i]`, or its own inputs where none given."""
    for i, case in enumerate(cases):
        yield case, inputs[i] if inputs is not None else make_inputs(case)


def first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}".strip()
