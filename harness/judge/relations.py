"""Relation records: a case's relation runs (harness/execution/relation_exec.py) -> one record per relation.

A record's `output` is `relation:<name>`; its status is `pass` (the two computations gave the same bits),
`within_bound` (not the same bits, every difference inside the bound of harness/numerics/bound.py),
`mismatch` (beyond it), `unsupported` (a run the relation needs is one the target cannot express, with its
reason), or the status of a run that failed (rejected, error, crash, timeout). `bound_ratio` is the largest
difference in units of the bound, `max_abs_err` the largest difference. Where the case itself gave no output,
each relation record takes its status and its known issue, as an unrun gradient does. A failed run of a
derived case (the case in the other layout, at batch 7, ...) takes a known issue that predicts that status
for the derived case's forward output; a record's own known issue selects `output: relation:<name>`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from harness.execution.host import cpu_facts, merged
from harness.execution.pool import Worker
from harness.execution.records import Record
from harness.judge.known_issues import KnownIssues
from harness.model.case import Case
from harness.numerics.inputs import Inputs
from harness.numerics.relation_pairs import Pair, needed, outcome
from harness.numerics.relations import output_name

# how a record names a run it could not get
RUN_NAMES = {"again": "the same input again", "second": "a second process", "layout": "the other layout",
             "kernels": "the kernel variants",
             "plain": "the case without bias and epilogue", "adjoint": "the adjoint partner",
             "probe": "the normal-range probe"}


def run_name(key: str) -> str:
    if key in RUN_NAMES:
        return RUN_NAMES[key]
    for prefix, what in (("batch", "batch "), ("row", "row "), ("threads", "the thread-count worker at batch "),
                         ("scale", "scaled by 2^"), ("probe_", "the subnormal probe "),
                         ("kernels:", "the kernel variant ")):
        if key.startswith(prefix):
            return what + key[len(prefix):]
    return key


def relation_records(case: Case, backend: str, worker: Worker, payload: dict[str, Any], inputs: Inputs | None,
                     oracle: tuple | None, known: KnownIssues | None, forward: Record | None) -> list[Record]:
    """One record per relation named in `payload["relation_names"]`; a failure of convdiff's own judging is that
    relation's `error` (origin convdiff), never the end of the run."""
    out = []
    for name in payload.get("relation_names") or ():
        try:
            out.append(relation_record(name, case, backend, worker, payload, inputs, oracle, known, forward))
        except Exception as exc:  # noqa: BLE001 - one record's judging must not stop the run
            out.append(Record(case_id=case.id, file=Path(case.file).name, op=case.op, params=case.params(),
                              backend=backend, backend_version=worker.version, device=worker.device, dtype=case.dtype,
                              status="error", output=output_name(name), error_origin="convdiff",
                              message=f"judging the relation failed: {type(exc).__name__}: {exc}"[:300]))
    return out


def relation_record(name: str, case: Case, backend: str, worker: Worker, payload: dict[str, Any],
                    inputs: Inputs | None, oracle: tuple | None, known: KnownIssues | None,
                    forward: Record | None) -> Record:
    output = output_name(name)
    params = case.params()
    rec = Record(case_id=case.id, file=Path(case.file).name, op=case.op, params=params, backend=backend,
                 backend_version=worker.version, device=worker.device, dtype=case.dtype, status=payload["status"],
                 output=output, path=payload.get("path") or "")
    host = merged(cpu_facts(), worker.host)
    if payload["status"] != "ok":
        rec.message = f"no relation: the case itself gave {payload['status']}: {payload.get('message', '')}".strip()
        _known(rec, known, case, backend, host, params)
        if forward is not None and forward.known_issue and not (rec.known_issue and rec.status in rec.known_status):
            rec.known_issue, rec.known_status, rec.known_issue_file = (forward.known_issue, forward.known_status,
                                                                       forward.known_issue_file)
        return rec
    if case.geometry is not None and tuple(np.shape(payload.get("array"))) != tuple(case.output_shape):
        rec.status = "shape_mismatch"  # as the forward record says: there is no output of the case's to relate
        rec.message = f"no relation: the case itself gave output shape {np.shape(payload.get('array'))}, not {case.output_shape}"
        _known(rec, known, case, backend, host, params)
        if not (rec.known_issue and rec.status in rec.known_status) and known is not None:  # the forward's entry
            entry = known.match(case, backend, worker.device, host, "out", None, params, rec.path, rec.status)
            if entry is not None and rec.status in entry.status:
                rec.known_issue, rec.known_status, rec.known_issue_file = entry.id, entry.status, entry.source
        return rec
    runs, subs = payload.get("relation_runs") or {}, payload.get("relations") or {}
    outs: dict[str, Any] = {}
    translations = []
    unsupported: list[Pair] = []  # kernel variants the target cannot run: said in the record, no verdict
    for key in _expand(needed(name, case, runs), subs):
        sub = payload if key == "main" else subs.get(key) or {
            "status": "error", "origin": "convdiff", "message": f"the worker returned no {key} run"}
        if key.startswith("kernels") and sub["status"] == "unsupported":
            unsupported.append(Pair("kernel variants" if key == "kernels" else f"kernel variant {key[8:]}",
                                    "unsupported", detail=sub.get("message", "")))
            continue
        rec.duration_s += float(sub.get("duration_s", 0.0)) if key != "main" else 0.0
        if sub["status"] != "ok":
            rec.status, rec.message = sub["status"], f"{run_name(key)}: {sub.get('message', '')}"
            if sub["status"] == "error":
                rec.error_origin = sub.get("origin") or "convdiff"
            base = key.partition(":")[0]  # kernels:<name>: the run of key `kernels`
            if known is not None and base in runs and sub["status"] != "unsupported":
                derived = runs[base].case
                entry = known.match(derived, backend, worker.device, run_host(sub, host), "out", None,
                                    derived.params(), status=sub["status"])
                if entry is not None and sub["status"] in entry.status:
                    rec.known_issue, rec.known_status, rec.known_issue_file = entry.id, entry.status, entry.source
                    return rec
            _known(rec, known, case, backend, host, params)
            return rec
        outs[key] = sub["array"]
        if key != "main" and sub.get("translation") and len(translations) < 1:
            translations.append(f"# {run_name(key)}:\n{sub['translation']}")
    assert inputs is not None
    result = outcome(name, case, inputs, oracle, runs, outs, payload.get("quant_rounding", "half_to_even"))
    result.pairs += unsupported
    rec.duration_s = round(rec.duration_s, 6)
    rec.status = result.status
    rec.bound_ratio = result.ratio if result.ratio != float("inf") else None
    rec.max_abs_err = result.max_abs if result.max_abs != float("inf") else None
    rec.rel_err = (result.max_abs / result.peak if result.peak > 0 else None) if rec.max_abs_err is not None else None
    note = f"{payload['threads_note']}: " if name == "threads" and payload.get("threads_note") else ""
    rec.message = note + result.message()
    rec.diagnosis = "flush_to_zero" if result.flush_to_zero else None
    rec.translation = "\n".join(translations) or payload.get("translation", "")
    rec.relation = {"pairs": [{"group": p.group, "status": p.status, "ratio": _finite(p.ratio), "max_abs": _finite(p.max_abs),
                            "differing": p.differing, "total": p.total, "detail": p.detail} for p in result.pairs]}
    if result.facts:
        rec.relation["subnormal"] = dict(result.facts)
    _known(rec, known, case, backend, host, params)
    # an entry for the relation that lists other statuses (a graph that refuses a batch it was not compiled for)
    # does not explain a mismatch: one of its runs' own wrong forward result may
    if rec.status == "mismatch" and "mismatch" not in rec.known_status and known is not None:
        _derived_known(rec, known, case, runs, _expand(needed(name, case, runs), subs), outs, subs, backend, host)
    return rec


def run_host(sub: dict[str, Any], host: dict[str, Any]) -> dict[str, Any]:
    """The facts a run is judged under: those of the worker that ran it where it says them (a kernel variant's
    worker decides its own, e.g. tf_onednn false under TF_ENABLE_ONEDNN_OPTS=0), else the case's worker's."""
    return merged(cpu_facts(), sub["host"]) if sub.get("host") else host


def _expand(keys: list[str], subs: dict[str, Any]) -> list[str]:
    """The runs' keys with `kernels` as the target answered it: once per variant (`kernels:<name>`), or once
    (`kernels`, unsupported) where it has none."""
    out = []
    for key in keys:
        variants = sorted(k for k in subs if k.startswith("kernels:")) if key == "kernels" else []
        out += variants or [key]
    return out


def _derived_known(rec: Record, known: KnownIssues, case: Case, runs: dict[str, Any], keys: list[str],
                   outs: dict[str, Any], subs: dict[str, Any], backend: str, host: dict[str, Any]) -> None:
    """A relation beyond its bound where one of its runs (the case itself, the other layout, a batch, the adjoint
    partner, a kernel variant under its own worker's facts) is a case whose own forward result a known issue says
    is wrong here (a mismatch, or a shape_mismatch where the run came back in a shape not its case's): that entry
    explains the relation too."""
    for key in keys:
        base = key.partition(":")[0]
        if key != "main" and (base not in runs or (runs[base].process != "main" and not (subs.get(key) or {}).get("host"))):
            continue
        derived = case if key == "main" else runs[base].case
        status = "mismatch"
        if derived.geometry is not None and key in outs and tuple(np.shape(outs[key])) != tuple(derived.output_shape):
            status = "shape_mismatch"  # its forward record would say so
        at = host if runs.get(base) is None or runs[base].process == "main" else run_host(subs[key], host)
        entry = known.match(derived, backend, rec.device, at, "out", None, derived.params(), status=status)
        if entry is not None and status in entry.status:
            rec.known_issue, rec.known_status, rec.known_issue_file = entry.id, ["mismatch"], entry.source
            rec.message += f" ({'the case itself' if key == 'main' else run_name(key)}: known issue {entry.id})"
            return


def _finite(v: float) -> float | None:
    return v if v != float("inf") else None


def _known(rec: Record, known: KnownIssues | None, case: Case, backend: str, host: dict[str, Any],
           params: dict[str, Any]) -> None:
    if known is None:
        return
    entry = known.match(case, backend, rec.device, host, rec.output, rec.error_size, params, rec.path, rec.status)
    if entry is not None:
        rec.known_issue, rec.known_status, rec.known_issue_file = entry.id, entry.status, entry.source
