"""`make models`: regenerate cases/models/ from real architectures and say what changed.

`python -m harness.commands.extract.corpus [--out cases/models] [--only NAME,...]` extracts each model
below with `convdiff extract` (torch probe, batch 1, architectures only: random weights) and
rewrites its case file; it prints, per model, the number of convolutions and distinct
configurations and whether the file changed, and exits 0 either way.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from harness.commands.extract import extract
from harness.commands.extract.writer import ExtractError
from harness.model.case_schema import with_schema_comment


@dataclass(frozen=True)
class Model:
    name: str
    spec: str  # package.module:callable returning the nn.Module
    input_shape: tuple[int, ...]
    notes: tuple[str, ...] = ()


ZOO = "harness.commands.extract.zoo"
MODELS = (
    Model("resnet18", f"{ZOO}:resnet18", (1, 3, 224, 224), ("torchvision.models.resnet18, ImageNet input size.",)),
    Model("mobilenet_v3_small", f"{ZOO}:mobilenet_v3_small", (1, 3, 224, 224),
          ("torchvision.models.mobilenet_v3_small (depthwise), ImageNet input size.",)),
    Model("deeplabv3_resnet50", f"{ZOO}:deeplabv3_resnet50", (1, 3, 128, 128),
          ("torchvision.models.segmentation.deeplabv3_resnet50 (dilated backbone, ASPP rates 12/24/36).",
           "SHRUNK: input 128x128, not its 520x520 evaluation size (feature maps 16x16, not 65x65): at",
           "520 the untuned TVM importers took over 120 s per dilated 512-channel case. Every layer keeps",
           "its kernel, stride, padding, dilation and channels.")),
    Model("r3d_18", f"{ZOO}:r3d_18", (1, 3, 8, 56, 56),
          ("torchvision.models.video.r3d_18 (3-D).",
           "SHRUNK: input 8 frames of 56x56, not its 16 frames of 112x112 (8x fewer outputs per layer):",
           "full size makes each 3-D case cost tens of seconds per backend. Every layer keeps its kernel,",
           "stride, padding and channels.")),
    Model("dcgan_generator", f"{ZOO}:dcgan_generator", (1, 100, 1, 1),
          ("DCGAN generator (pytorch/examples dcgan), a 100-d latent to a 64x64 image (transposed convolutions).",)),
    Model("wav2vec2_front_end", f"{ZOO}:wav2vec2_front_end", (1, 1, 16000),
          ("wav2vec 2.0 base feature encoder and positional convolution (1-D audio), one second at 16 kHz.",)),
)


def regenerate(out: Path, only: set[str] | None = None) -> list[str]:
    """Rewrite each model's case file; returns the names whose file changed."""
    changed = []
    out.mkdir(parents=True, exist_ok=True)
    for m in MODELS:
        if only and m.name not in only:
            continue
        t = time.perf_counter()
        shape = ",".join(map(str, m.input_shape))
        result = extract(m.spec, list(m.input_shape), framework="torch", name=m.name, notes=list(m.notes),
                         command=f"convdiff extract {m.spec} --input-shape {shape} --name {m.name}")
        path = out / f"{m.name}.yaml"
        text = with_schema_comment(path, result.text)
        old = path.read_text() if path.exists() else None
        state = "unchanged" if old == text else ("new" if old is None else "changed")
        if state != "unchanged":
            path.write_text(text)
            changed.append(m.name)
        print(f"{path}: {len(result.layers)} convolutions, {result.distinct} distinct, {state} "
              f"({time.perf_counter() - t:.0f} s)")
    return changed


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m harness.commands.extract.corpus", description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="cases/models")
    ap.add_argument("--only", help="comma-separated model names")
    args = ap.parse_args(argv)
    try:
        changed = regenerate(Path(args.out), set(args.only.split(",")) if args.only else None)
    except ExtractError as exc:
        print(f"convdiff models: {exc}", file=sys.stderr)
        return 2
    print(f"cases/models: {len(changed)} file(s) changed: {', '.join(changed)}" if changed
          else "cases/models: nothing changed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
