"""convdiff's engine, in stage subpackages; each imports only the stages listed before it.

    model/       the case: fields, YAML with line numbers, validity, loading, sweeps
    numerics/    inputs, the float64 and exact-integer oracles, the bound, compare
    (backends/)  the adapters: they read a Case and its Inputs, nothing later
    execution/   worker processes, pool, runner, records, host facts
    judge/       verdicts, diagnosis, drift, blame, known issues, summary
    (reports/)   report writers and reproducers
    commands/    cli, pytest plugin, fuzz, minimize, selftest, probe, extract, host matrix

`worker.py` and `host_matrix.py` here are the documented `python -m` entry points, nothing more.
tests/test_layering.py enforces the order.
"""
