"""Judgement: turn a worker's answer into a result record (verdict), name the bug class
(diagnosis, diagnosis_grad), find drift and blame, apply known issues, summarize a run.

Imports harness.model, harness.numerics and harness.execution (records, host facts).
"""
