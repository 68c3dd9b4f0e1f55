"""cases/opinfo.yaml: PyTorch's OpInfo conv samples and error inputs, generated from the installed torch by
`python -m harness.commands.extract.opinfo` (harness/commands/extract/opinfo.py).

In make test: the committed file loads and holds all of them as OpInfo passes them (counted from torch 2.13.0's
op_db on 2026-11-29: 92 samples, 46 of them unbatched, and 30 error inputs). Nightly only
(CONVDIFF_FULL_TESTS=1): regenerating it from the installed torch gives the same file; importing torch's OpInfo
database and checking each case against torch takes ~9 s of CPU on a 2-core AMD EPYC (Zen 4), more than a
make test item may cost.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.commands.extract.opinfo import main
from harness.model.loader import load_file

FILE = Path(__file__).resolve().parents[1] / "cases" / "opinfo.yaml"


def test_the_committed_file_holds_every_sample_as_opinfo_passes_it() -> None:
    cases = load_file(FILE)
    errors = [c for c in cases if c.expect == "invalid"]
    samples = [c for c in cases if c.expect == "valid"]
    assert (len(samples), len(errors)) == (92, 30)
    assert sum(c.unbatched for c in samples) == 46
    assert all("opinfo" in c.tags for c in cases)
    by_id = {c.id: c for c in cases}
    # groups 3 on 2 channels with OpInfo's (2, 2, 2) weight, not an approximation of it
    assert by_id["conv1d_error_07"].weight_shape == (2, 2, 2) and by_id["conv1d_error_07"].groups == 3
    # an int64 input and weight with a float64 bias, unbatched
    e = by_id["conv2d_error_00"]
    assert e.unbatched and e.tensor_dtypes == ("int64", "int64", "float64")
    # torch's padding='same' on a strided conv3d: invalid by torch's convention only
    assert by_id["conv3d_error_09"].same_convention == "torch" and max(by_id["conv3d_error_09"].stride) == 2


@pytest.mark.nightly("imports torch's OpInfo database: see the module docstring")
def test_regenerating_it_from_the_installed_torch_gives_the_same_file() -> None:
    assert main(["--check", "-o", str(FILE)]) == 0
