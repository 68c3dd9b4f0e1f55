"""The numerics: seeded inputs, the float64 and exact-integer oracles (forward and gradients),
the per-element error bound, and the comparison of an output against the oracle.

Imports only harness.model.
"""
