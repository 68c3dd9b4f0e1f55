"""Host facts: what about this machine can change a framework's verdict.

The controller reads the CPU from /proc/cpuinfo (vendor, model, the ISA flags that
pick kernels) and the environment settings that frameworks read; each worker adds
what its framework decided, read live from the framework (see Backend.host_facts).
Known issues select on these with `host:`; the night-to-night diff compares results
only between runs whose facts agree (`host_key`).
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
from collections.abc import Iterable, Mapping, Sequence
from functools import cache
from typing import Any

# ISA flags (as /proc/cpuinfo spells them) that select convolution kernels in oneDNN,
# ATen, XLA, MLAS and OpenVINO. Other flags are left out: they only make keys noisy.
ISA_FLAGS = ("sse4_2", "avx", "f16c", "fma", "avx2", "avx512f", "avx512bw", "avx512vl", "avx512_vnni",
             "avx512_bf16", "avx512_fp16", "avx_vnni", "amx_tile", "amx_bf16", "amx_int8", "amx_fp16")

# Environment variables that frameworks read to pick kernels: recorded, never used to infer a fact.
ENV_SETTINGS = ("TF_ENABLE_ONEDNN_OPTS", "ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA", "ATEN_CPU_CAPABILITY",
                "OMP_NUM_THREADS", "MKL_NUM_THREADS", "XLA_FLAGS", "FLAGS_use_mkldnn")

# Every fact a `host:` selector may name, with what it means. Backends add their keys here.
FACTS: dict[str, str] = {
    "cpu_vendor": "CPU vendor id from /proc/cpuinfo (GenuineIntel, AuthenticAMD, ...)",
    "cpu_model": "CPU model name",
    "cpu_flags": "the kernel-selecting ISA flags the CPU has (list; select with {has: X} or {lacks: X})",
    "cores": "logical CPUs this process may use",
    "machine": "platform.machine() (x86_64, aarch64, ...)",
    "tf_onednn": "TensorFlow's live oneDNN state (IsMklEnabled) in the worker",
    "tf_bf16_conv": "TensorFlow runs a 1x1 bfloat16 conv2d in the worker (a live probe; False where it raises)",
    "tf_f16_conv": "TensorFlow runs a 1x1 float16 conv2d in the worker (a live probe; False where it raises)",
    "tf_threads": "TensorFlow intra-op threads as configured (0 = its default)",
    "torch_cpu_capability": "torch.backends.cpu.get_cpu_capability(): the ATen kernel ISA (DEFAULT, AVX2, AVX512, ...)",
    "torch_mkldnn": "torch.backends.mkldnn.is_available()",
    "torch_mkldnn_bf16": "oneDNN bfloat16 kernels usable by torch on this CPU (honours ONEDNN_MAX_CPU_ISA)",
    "torch_mkldnn_fp16": "oneDNN float16 kernels usable by torch on this CPU (honours ONEDNN_MAX_CPU_ISA)",
    "torch_onednn_version": "oneDNN version torch was built with",
    "torch_mkl_version": "MKL version torch was built with",
    "torch_threads": "torch.get_num_threads()",
    "torch_bf16_subnormals": "what torch's bfloat16 CPU conv does with a subnormal input, a live probe: kept, or flushed "
                             "(oneDNN's AVX512_BF16 instructions treat subnormals as zero whatever MXCSR says)",
    "torch_quantized_engine": "torch.backends.quantized.engine the torch.ao backend set in its worker (x86, fbgemm, onednn, qnnpack)",
    "torch_quantized_engines": "torch.backends.quantized.supported_engines in this torch build (list)",
    "torch_onednn_int8_isa": "ISA of the oneDNN kernel the worker's quantized engine ran a u8 x s8 conv2d with, read live from "
                             "ONEDNN_VERBOSE (avx2, avx512_core, avx512_core_vnni, avx10_1_512_amx, ...; none: the engine "
                             "called no oneDNN conv, e.g. fbgemm, or x86 on a CPU without AVX512-VNNI)",
    "inductor_vec_isa": "the vector ISA torch.compile's C++ code is generated and built for (torch._inductor.cpu_vec_isa."
                        "pick_vec_isa(): amx, avx512, avx2, ...; none: scalar code). Follows ATEN_CPU_CAPABILITY and the CPU",
    "inductor_cache": "how the worker keeps inductor's FX graph cache: per-isa (a directory per ATen capability, vector "
                      "ISA and oneDNN cap, backends/torch/inductor.py cache_dir) or off (CONVDIFF_CACHE off); never "
                      "shared, torch's default of one directory read under every ISA, whose key leaves the ISA out",
    "paddle_onednn": "Paddle built with oneDNN (MKLDNN) and FLAGS_use_mkldnn as read by Paddle",
    "paddle_inference_onednn": "whether a default CPU paddle.inference Config runs oneDNN (Config.mkldnn_enabled())",
    "xnnpack_f16_accumulation": "what ExecuTorch's XNNPACK delegate accumulates a float16 conv in (a live probe, "
                                "backends/executorch/runtime.py: f32, or f16 where XNNPACK picks its AVX512-FP16 "
                                "kernels; XNNPACK chooses microkernels from CPUID alone, so cpu_flags select them)",
    "executorch_threads": "threads in ExecuTorch's runtime threadpool (the XNNPACK delegate runs on it)",
    "iree_target_cpu": "the CPU iree-compile's --iree-llvmcpu-target-cpu=host resolves to (LLVM's name, e.g. emeraldrapids)",
    "iree_cpu_features": "the kernel-relevant CPU features IREE's llvm-cpu target enables for host (list: avx2, avx512f, "
                         "avx512fp16, avx512bf16, avx512vnni, amx-tile, ...)",
    "tvm_target": "the TVM target string the backend compiles for",
    "jax_conv_impl": "what XLA lowered a float32 conv to in the worker: hlo-convolution (its own, Eigen on CPU) or a custom-call target",
    "jax_f32_conv_dtype": "element type XLA's optimized HLO convolves float32 in (live compile)",
    "jax_f16_conv_dtype": "element type XLA's optimized HLO convolves float16 in (f32: upcast around the conv)",
    "jax_bf16_conv_dtype": "element type XLA's optimized HLO convolves bfloat16 in (f32: upcast around the conv)",
    "jax_threads": "threads in XLA's CPU intra-op (Eigen) pool, counted in the worker",
    "openvino_int8_pair_sums": "what OpenVINO's u8 x s8 int8 conv computes for four products 255 * 127 (a live probe, "
                               "backends/int8_probe.py): exact, or int16-saturated (pair sums clamped: oneDNN "
                               "without VNNI, vpmaddubsw)",
    "torch_int8_pair_sums": "the same probe through the torch.ao worker's quantized engine (fbgemm and MLAS-like "
                            "paths decide from CPUID alone, oneDNN from CPUID capped by ONEDNN_MAX_CPU_ISA)",
    "ort_int8_pair_sums": "the same probe through ONNX Runtime's quantized path (QLinearConv, or the fused QDQ "
                          "group for onnxruntime-qdq); MLAS decides from CPUID alone",
    "openvino_int8_grouped_conv3d_kernel": "the primitive OpenVINO's CPU plugin runs a padded grouped uint8 conv3d "
                                           "with (its execution graph's primitiveType: brgconv_avx512_I8, or "
                                           "jit_gemm_I8, which pads with 0 instead of the zero point)",
    "openvino_inference_precision": "the precision OpenVINO's CPU plugin computes an f32 model in at default "
                                    "hints (compiled model's INFERENCE_PRECISION_HINT: bf16, f16, f32)",
}


CPUINFO = "/proc/cpuinfo"


def _cpuinfo() -> dict[str, str]:
    """The first processor's fields from /proc/cpuinfo ({} where there is none)."""
    try:
        with open(CPUINFO, encoding="utf-8") as fh:
            text = fh.read()
    except OSError:
        return {}
    fields: dict[str, str] = {}
    for line in text.split("\n\n", 1)[0].splitlines():
        key, _, value = line.partition(":")
        fields.setdefault(key.strip(), value.strip())
    return fields


@cache
def cpu_facts() -> dict[str, Any]:
    """CPU facts of this machine, as the controller sees them (read once per process)."""
    info = _cpuinfo()
    flags = set(info.get("flags", "").split())
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    return {
        "cpu_vendor": info.get("vendor_id", platform.processor() or "unknown"),
        "cpu_model": info.get("model name", platform.processor() or platform.machine()),
        "cpu_flags": [f for f in ISA_FLAGS if f in flags],
        "cores": cores,
        "machine": platform.machine(),
    }


def env_settings() -> dict[str, str]:
    """The kernel-selecting environment variables that are set (recorded as given, not interpreted)."""
    return {k: os.environ[k] for k in ENV_SETTINGS if k in os.environ}


def merged(controller: Mapping[str, Any], target: Mapping[str, Any] | None) -> dict[str, Any]:
    """The facts a known issue sees for one target: the machine's plus that target's worker's."""
    return {**controller, **(target or {})}


# Facts that only describe the run's size or wording, not what decides a verdict: left out of the key.
_NOT_IN_KEY = ("cpu_model", "cores", "tf_threads", "torch_threads", "jax_threads")


def host_key(facts: Mapping[str, Any]) -> str:
    """A short stable digest of the verdict-deciding facts: equal keys mean comparable runs."""
    kept = {k: v for k, v in sorted(facts.items()) if k.rpartition(".")[2] not in _NOT_IN_KEY}
    return hashlib.sha256(json.dumps(kept, sort_keys=True, default=str).encode()).hexdigest()[:12]


def run_host_key(target_keys: Mapping[str, Sequence[str]]) -> str:
    """The host key of a whole run (or of merged shards): its targets' keys together."""
    return host_key({t: list(ks) for t, ks in target_keys.items()}) if target_keys else host_key(cpu_facts())


def target_host_keys(host: Mapping[str, Any], target_facts: Mapping[str, Mapping[str, Any]],
                     targets: Iterable[str]) -> dict[str, str]:
    """Per target (`torch-cpu`): the key of what can change its verdicts (machine + its worker's facts)."""
    return {t: host_key(merged(host, target_facts.get(t))) for t in targets}


def describe_host() -> str:
    """One line for people: the machine, its kernel-selecting flags and the settings that are set."""
    f = cpu_facts()
    env = ", ".join(f"{k}={v}" for k, v in env_settings().items()) or "none set"
    return (f"host: {f['cpu_vendor']} {f['cpu_model']}, {f['cores']} cores, {f['machine']}; "
            f"flags: {' '.join(f['cpu_flags']) or 'none'}; env: {env}")


GPU_NODES = ("/dev/nvidiactl", "/dev/nvidia0", "/dev/kfd", "/dev/dxg")  # NVIDIA, ROCm, WSL's GPU


def gpu_present() -> bool:
    """Whether a GPU runtime could open a device here. Without one no framework initializes CUDA, in a fork
    or not: a CUDA worker forked from a template then answers what a fresh one does (no CUDA device)."""
    return any(os.path.exists(node) for node in GPU_NODES)
