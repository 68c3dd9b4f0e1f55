"""The architectures behind cases/models/ (imported only inside the torch probe's process).

Architectures only: every model is built with random initial weights (no download), since
the harness draws its own weights from each case's seed.

torchvision: the PyPI wheel of torchvision 0.28.0 (the release for torch 2.13) is the CUDA
13.0 build (`__version__ == '0.28.0+cu130'`): its C extension `_C.so` links
libtorch_cuda.so and libc10_cuda.so, which the CPU wheel of torch 2.13.0 does not ship, so
`torch.ops.load_library` fails (torchvision/extension.py swallows that), and then
torchvision/__init__.py imports _meta_registrations.py, whose unguarded
`@torch.library.register_fake("torchvision::nms")` raises "operator torchvision::nms does not
exist" (https://github.com/pytorch/vision/issues/9085). The model definitions do not need
the compiled operators (only detection's nms/roi_align do), so `torchvision_models()` loads
the `torchvision.models` subpackage from the installed wheel without running the package's
__init__ when the normal import fails: the code that builds the networks is torchvision's own.

Not in torchvision (written here from their published definitions, see each docstring):
a DCGAN generator (transposed convolutions) and the wav2vec 2.0 feature encoder (1-D audio).
"""

from __future__ import annotations

import importlib
import importlib.util
import itertools
import sys
import types
from typing import Any

import torch
from torch import nn


def torchvision_models() -> Any:
    """`torchvision.models`, importing around the wheel's broken operator registration if needed."""
    try:
        import torchvision.models as models

        return models
    except RuntimeError:
        pass
    for name in [n for n in sys.modules if n == "torchvision" or n.startswith("torchvision.")]:
        del sys.modules[name]
    spec = importlib.util.find_spec("torchvision")
    if spec is None or spec.submodule_search_locations is None:
        raise ImportError("torchvision is not installed")
    package = types.ModuleType("torchvision")
    package.__path__ = list(spec.submodule_search_locations)
    package.__spec__ = spec
    package.__file__ = spec.origin
    sys.modules["torchvision"] = package
    return importlib.import_module("torchvision.models")


def resnet18() -> nn.Module:
    return torchvision_models().resnet18(weights=None)


def mobilenet_v3_small() -> nn.Module:
    return torchvision_models().mobilenet_v3_small(weights=None)


def deeplabv3_resnet50() -> nn.Module:
    """Dilated ResNet-50 backbone (output stride 8) and the ASPP head (rates 12, 24, 36)."""
    seg = importlib.import_module("torchvision.models.segmentation") if torchvision_models() else None
    return seg.deeplabv3_resnet50(weights=None, weights_backbone=None, aux_loss=False)


def r3d_18() -> nn.Module:
    torchvision_models()
    return importlib.import_module("torchvision.models.video").r3d_18(weights=None)


class DCGANGenerator(nn.Module):
    """The DCGAN generator (Radford et al. 2016) as in pytorch/examples dcgan/main.py `Generator`:
    a latent vector nz x 1 x 1 grown to a 64 x 64 image by five transposed convolutions
    (kernel 4; the first stride 1, padding 0; then stride 2, padding 1), no bias, with
    BatchNorm + ReLU between them and Tanh at the end. nz=100, ngf=64, nc=3 as there."""

    def __init__(self, nz: int = 100, ngf: int = 64, nc: int = 3) -> None:
        super().__init__()
        widths = [nz, ngf * 8, ngf * 4, ngf * 2, ngf, nc]
        layers: list[nn.Module] = []
        for i, (cin, cout) in enumerate(itertools.pairwise(widths)):
            first, last = i == 0, i == len(widths) - 2
            layers.append(nn.ConvTranspose2d(cin, cout, 4, 1 if first else 2, 0 if first else 1, bias=False))
            layers += [nn.Tanh()] if last else [nn.BatchNorm2d(cout), nn.ReLU(True)]
        self.main = nn.Sequential(*layers)

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        return self.main(z)


def dcgan_generator() -> nn.Module:
    return DCGANGenerator()


class Wav2Vec2FrontEnd(nn.Module):
    """The convolutions of wav2vec 2.0 base (Baevski et al. 2020) on raw 16 kHz audio, with the
    defaults of Hugging Face transformers' `Wav2Vec2Config`: the feature encoder, seven Conv1d of
    512 channels, kernels (10, 3, 3, 3, 3, 2, 2), strides (5, 2, 2, 2, 2, 2, 2), no bias, GroupNorm
    after the first and GELU after each; a Linear projection to 768; and the convolutional
    positional embedding, Conv1d(768, 768, kernel 128, padding 64, groups 16) with bias, whose
    last output step is dropped (even kernel) before GELU and the residual sum."""

    def __init__(self, dim: int = 512, hidden: int = 768, pos_kernel: int = 128, pos_groups: int = 16) -> None:
        super().__init__()
        kernels, strides = (10, 3, 3, 3, 3, 2, 2), (5, 2, 2, 2, 2, 2, 2)
        self.convs = nn.ModuleList(
            nn.Conv1d(1 if i == 0 else dim, dim, k, s, bias=False) for i, (k, s) in enumerate(zip(kernels, strides)))
        self.norm = nn.GroupNorm(dim, dim)
        self.project = nn.Linear(dim, hidden)
        self.pos_conv = nn.Conv1d(hidden, hidden, pos_kernel, padding=pos_kernel // 2, groups=pos_groups)
        self.drop_last = pos_kernel % 2 == 0

    def forward(self, wave: torch.Tensor) -> torch.Tensor:
        x = wave
        for i, conv in enumerate(self.convs):
            x = conv(x)
            x = nn.functional.gelu(self.norm(x) if i == 0 else x)
        h = self.project(x.transpose(1, 2)).transpose(1, 2)
        pos = self.pos_conv(h)
        if self.drop_last:
            pos = pos[..., :-1]
        return h + nn.functional.gelu(pos)


def wav2vec2_front_end() -> nn.Module:
    return Wav2Vec2FrontEnd()
