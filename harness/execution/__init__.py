"""Execution: worker processes (one per backend and device), the pool that starts and restarts
them, the runner that feeds them cases, result records, and the host facts that pick kernels.

Imports harness.model, harness.numerics and backends/ (the registry, in the worker). The runner
is handed its judge (a callable) by the command that runs it, so it never imports harness.judge.
"""
