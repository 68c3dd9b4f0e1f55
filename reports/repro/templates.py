"""Loads every reproducer template module, so that each registers its templates.

Imported by reports/repro/script.py only; it imports the template modules and nothing imports
it back. A new framework's template module is one more line here, one import per line
(see reports/repro/registry.py).
"""

# ruff: noqa: F401 - each import registers that module's templates
import reports.repro.executorch
import reports.repro.frameworks
import reports.repro.inductor
import reports.repro.iree
import reports.repro.jax
import reports.repro.onnx
import reports.repro.paddle_inference
import reports.repro.tf_deployed
import reports.repro.torch
import reports.repro.tvm
import reports.repro.tvm_relax
