"""The commands built on the stages: the `convdiff` CLI, the pytest plugin, fuzz, minimize,
selftest, probe, extract and the host matrix.

The top stage: may import every stage and reports/; nothing imports it.
"""
