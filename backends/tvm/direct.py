"""TVM (Relax): shared plumbing for every TVM path, and the direct-operator backend `tvm`.

The direct backend builds each case as one Relax function around
`relax.op.nn.conv{1,2,3}d[_transpose]` with explicit layout strings: channels_last
cases run with N*C data layouts natively (the layout handling is under test), with
the weight supplied in the matching channels-last kernel layout. Padding is given as
begin/end pairs (all befores, then all afters), output_padding as TVM's own
argument, bias as a broadcast `relax.op.add`. The epilogue follows in the same function
(backends/tvm/epilogue.py), its constants function parameters passed at run time like the
weights, so no pass can fold them (`tvm-bound`, backends/tvm/bound.py, binds them). Compiled
modules are cached on disk (see backends/tvm/cache.py), so a second run compiles nothing.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from typing import Any

import numpy as np

from backends.base import Backend, Capabilities, HostFact, Output, Rejected, first_line, given_inputs
from backends.tvm import epilogue as tvm_epilogue
from backends.tvm.cache import Batched, CachedBuildFailure, CompileCache, cache_key
from backends.tvm.plan import canonical_kernel_layout, data_layout, direct_plan, kernel_layout, relayout
from harness.model.case import Case
from harness.numerics.inputs import Inputs

# pure modules that decide what a TVM adapter builds: part of every TVM cache key
PLAN_MODULES = ("backends.tvm.plan", "backends.tvm.epilogue", "backends.pads")


def digest_modules(cls: type) -> list[str]:
    """The modules whose source keys an adapter's cache: its own (backends.tvm), the plan's, and, for an
    importer, those of the other family that write the model it imports (`model_sources`: torch's module, the
    ONNX graph, TF's function), or a change there would replay builds of the old model."""
    modules = {klass.__module__ for klass in cls.__mro__ if klass.__module__.startswith("backends.tvm")}
    return sorted(modules | set(getattr(cls, "model_sources", ())) | set(PLAN_MODULES))


def source_digest(cls: type) -> str:
    """Digest of the adapter's own source files: editing how a module is built invalidates its cache."""
    import hashlib
    import inspect
    import sys

    h = hashlib.sha256()
    for name in digest_modules(cls):
        h.update(inspect.getsource(sys.modules[name]).encode())
    return h.hexdigest()[:16]


class Collected(Exception):
    """prepare()'s stop sign: run() reached its compile, whose (key, module factory) is now noted."""


class BatchFunction:
    """A case's function in a batch module's VM, called as `main` like a module of its own."""

    def __init__(self, vm: Any, function: str) -> None:
        self.vm, self.function = vm, function

    def __getitem__(self, name: str) -> Any:
        return self.vm[self.function if name == "main" else name]


class TvmBase(Backend):
    """What every TVM path shares: device, target, compile cache, running a VM."""
    builds_per_case = True  # exports, converts or compiles a model per case (run --compiled-sample)
    batch_size = 32  # prepare(): cases compiled as one module (see backends/tvm/cache.py)

    framework = "tvm"
    distribution = "apache-tvm"

    def set_threads(self, n: int) -> None:
        # the TVM runtime reads it when its thread pool first starts (the first parallel kernel), after setup
        os.environ["TVM_NUM_THREADS"] = str(n)

    def thread_count(self) -> int | None:
        return int(self.tvm.get_global_func("runtime.NumThreads")())

    def setup(self, device: str) -> None:
        import tvm
        from tvm import relax

        self.tvm, self.relax = tvm, relax
        self.cache = CompileCache()
        self.adapter_digest = source_digest(type(self))
        self.collecting: list[tuple[str, Callable[[], Any]]] | None = None  # prepare() in progress
        self.batch_vms: dict[tuple[str, str], Any] = {}  # (batch library, device) -> its VM

    def prepare(self, cases: list[Case], device: str, inputs: list[Inputs] | None = None) -> dict[str, int]:
        """Compile the cases' modules `batch_size` at a time (issue 26): run() up to its compile, noting
        each uncached (key, module factory) instead of building it, then one tvm.compile per batch.
        run() then finds its key in the cache and executes the very function it would have built."""
        if self.cache.root is None:
            return {"batched": 0}
        self.collecting = []
        try:
            for case, data in given_inputs(cases, inputs):
                if case.geometry is None or self.epilogue_reason(case) or self.supports(case, device):
                    continue
                with contextlib.suppress(Exception):  # Collected, or an answer run() gives again per case
                    self.run(case, data, device)
        finally:
            todo, self.collecting = self.collecting, None
        target = self.target(device)
        size = self.batch_size
        done = sum(self.cache.build_batch(self.batch_modules(todo[i:i + size]),
                                          lambda mod: self.tvm.compile(mod, target=target))
                   for i in range(0, len(todo), size))
        return {"to_build": len(todo), "batched": done}

    def batch_modules(self, entries: list[tuple[str, Callable[[], Any]]]) -> list[tuple[str, Callable[[], Any]]]:
        """One batch's (key, module factory) pairs, before build_batch calls the factories: a path that can
        make many cases' modules at once (tvm-torch-import) returns factories of modules it made together."""
        return entries

    def device_reason(self, device: str) -> str | None:
        if device == "cpu":
            return None
        if device == "cuda":
            if not self.tvm.runtime.enabled("cuda"):
                return "this TVM build has no CUDA runtime (tvm.runtime.enabled('cuda') is False)"
            if not self.tvm.cuda(0).exist:
                return "no CUDA device (tvm.cuda().exist is False)"
            return None
        return f"unknown device {device}"

    def host_facts(self, device: str) -> dict[str, HostFact]:
        return {"tvm_target": self.target(device)}

    def fingerprint(self, device: str) -> dict[str, str]:
        info = {"version": self.tvm.__version__, "target": self.target(device)}
        llvm = self.tvm.support.libinfo().get("LLVM_VERSION")
        if llvm:
            info["llvm"] = str(llvm)
        if device == "cuda" and self.tvm.cuda(0).exist:
            info["gpu"] = str(self.tvm.cuda(0).device_name)
        return info

    def target(self, device: str) -> str:
        return "cuda" if device == "cuda" else "llvm"

    def dev(self, device: str) -> Any:
        return self.tvm.cuda(0) if device == "cuda" else self.tvm.cpu(0)

    # --- compile (cached) and run ------------------------------------------
    def key(self, case: Case, device: str, **extra: Any) -> str:
        """Everything that affects the built module; `extra` adds variant-specific parts."""
        parts = {
            "variant": self.name, "adapter": self.adapter_digest, "tvm": self.tvm.__version__,
            "target": self.target(device),
            "op": case.op, "input_shape": case.input_shape, "weight_shape": case.weight_shape,
            "bias": case.bias, "stride": case.stride, "padding": case.padding,
            "output_padding": case.output_padding, "dilation": case.dilation, "groups": case.groups,
            "dtype": case.dtype, "layout": case.layout, **extra,
        }
        if case.input_dtype or case.weight_dtype or case.bias_dtype:  # an invalid case's own dtypes (others' keys
            parts["tensor_dtypes"] = case.tensor_dtypes  # stay as they were)
        return cache_key(parts)

    def compile_cached(self, key: str, device: str, make_mod: Callable[[], Any]) -> tuple[Any, str]:
        """A VirtualMachine for the module, and a translation line saying how it was obtained."""
        target = self.target(device)
        if self.collecting is not None:  # prepare(): note the build, run nothing
            if not self.cache.known(key):
                self.collecting.append((key, make_mod))
            raise Collected(key)

        def build() -> Any:
            return self.tvm.compile(make_mod(), target=target)

        try:
            exe, hit = self.cache.get_or_build(key, build)
            vm = self.batch_vm(exe, device) if isinstance(exe, Batched) else self.relax.VirtualMachine(exe, self.dev(device))
        except Rejected:
            raise
        except CachedBuildFailure as exc:
            raise Rejected(str(exc)) from None
        except Exception as exc:  # noqa: BLE001 - any framework exception is a finding
            raise Rejected(first_line(exc)) from None
        path = self.cache.path(key)
        if isinstance(exe, Batched):
            line = (f"exe = tvm.runtime.load_module({str(exe.path)!r})  # compile cache hit: built with other "
                    f"cases as one module (tvm.compile, target {target!r}), this case's main as {exe.function}")
        elif hit:
            line = f"exe = tvm.runtime.load_module({str(path)!r})  # compile cache hit"
        else:
            line = f"exe = tvm.compile(mod, target={target!r})" + (f"  # cached as {path}" if path else "")
        return vm, line

    def batch_vm(self, batched: Batched, device: str) -> BatchFunction:
        """The case's function in its batch library's VM (one VM per library and device)."""
        slot = (str(batched.path), device)
        if slot not in self.batch_vms:
            self.batch_vms[slot] = self.relax.VirtualMachine(batched.library, self.dev(device))
        return BatchFunction(self.batch_vms[slot], batched.function)

    def invoke(self, vm: Any, args: list[np.ndarray], device: str) -> tuple[np.ndarray, str]:
        """Run `main` on numpy inputs; the output as numpy in its own dtype."""
        dev = self.dev(device)
        try:
            out = vm["main"](*(self.tvm.runtime.tensor(a, dev) for a in args))
            if isinstance(out, (list, tuple)) or not hasattr(out, "numpy"):
                out = out[0]
            arr = out.numpy()
        except Exception as exc:  # noqa: BLE001 - any framework exception is a finding
            raise Rejected(first_line(exc)) from None
        return arr, str(arr.dtype)


class TvmBackend(TvmBase):
    """Direct Relax operators, compiled with tvm.compile for llvm (cpu) or cuda."""

    name = "tvm"
    epilogue_ops = tvm_epilogue.OPS
    capabilities = Capabilities(
        padding=("symmetric", "asymmetric"),
        padding_identities=("same/valid: the explicit (before, after) pairs they resolve to",
                            "transpose SAME tail (kernel < stride): output_padding"),
        output_padding="native",
        gradients="relax.transform.Gradient (conv2d NCHW/OIHW only)",
    )

    def run_gradients(self, case: Case, inputs: Inputs, dy: np.ndarray, device: str) -> dict[str, Output]:
        from backends.tvm.gradients import relax_gradients

        return relax_gradients(self, case, inputs, dy, device)

    def build(self, case: Case, device: str) -> tuple[Callable[[], Any], list[str], list[str]]:
        """An IRModule factory, the translation lines, and the exact-identity notes.

        `main` takes x, w, (b), then the epilogue's parameters (backends/tvm/epilogue.py) in order.
        """
        relax = self.relax
        fn_name, kw, w_shape, bshape, lines, notes = direct_plan(case)
        lines = [*lines, *tvm_epilogue.lines(case)]
        out_c = case.out_channels

        x_dtype, w_dtype, b_dtype = case.tensor_dtypes  # an invalid case's may differ: declared as stated

        def make_mod() -> Any:
            def tensor(shape: tuple[int, ...], dtype: str = case.dtype) -> Any:
                return relax.TensorType(shape=shape, dtype=dtype)

            x = relax.Var("x", tensor(case.input_shape, x_dtype))
            w = relax.Var("w", tensor(w_shape, w_dtype))
            params = [x, w]
            bb = relax.BlockBuilder()
            if case.bias:
                b = relax.Var("b", tensor((out_c,), b_dtype or case.dtype))
                params.append(b)
            extra = {p.name: relax.Var(p.name, tensor(p.shape)) for p in tvm_epilogue.parameters(case)}
            params += extra.values()
            with bb.function("main", params):
                with bb.dataflow():
                    y = bb.emit(getattr(relax.op.nn, fn_name)(x, w, **kw))
                    if case.bias:
                        y = bb.emit(relax.op.add(y, relax.op.reshape(b, bshape) if not case.channels_last else b))
                    y = tvm_epilogue.emit(relax, bb, case, y, extra)
                    out = bb.emit_output(y)
                bb.emit_func_output(out)
            return bb.get()

        return make_mod, lines, notes

    def arguments(self, case: Case, inputs: Inputs) -> dict[str, np.ndarray]:
        """`main`'s parameters by name, in order: x, w (declared kernel layout), b, the epilogue's."""
        args = {"x": inputs.x, "w": relayout(inputs.w, canonical_kernel_layout(case), kernel_layout(case))}
        if inputs.b is not None:
            args["b"] = inputs.b
        return {**args, **tvm_epilogue.arrays(case, inputs.epilogue)}

    def key_parts(self, case: Case, inputs: Inputs) -> dict[str, Any]:
        """What the built module depends on beyond `key`'s common parts."""
        return {"data_layout": data_layout(case), "kernel_layout": kernel_layout(case), "epilogue": list(case.epilogue)}

    def run(self, case: Case, inputs: Inputs, device: str) -> Output:
        make_mod, lines, notes = self.build(case, device)
        key = self.key(case, device, **self.key_parts(case, inputs))
        vm, how = self.compile_cached(key, device, make_mod)
        args = self.arguments(case, inputs)
        arr, dtype = self.invoke(vm, list(args.values()), device)
        lines += [how, f"y = relax.VirtualMachine(exe, dev)['main']({', '.join(args)})"]
        return Output(arr, dtype, "\n".join(lines), notes=notes)
