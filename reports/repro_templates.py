"""Loads every reproducer template module, so that each registers its templates.

Imported by reports/repro.py only; it imports the template modules and nothing imports
it back. A new framework's template module is one more line here, one import per line
(see reports/repro_registry.py).
"""

# ruff: noqa: F401 - each import registers that module's templates
import reports.repro_frameworks
import reports.repro_inductor
import reports.repro_jax
import reports.repro_onnx
import reports.repro_paddle_inference
import reports.repro_tf_deployed
import reports.repro_torch
import reports.repro_tvm
import reports.repro_tvm_relax
