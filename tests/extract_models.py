"""Small torch models for tests/test_extract.py (imported only inside the torch probe's process)."""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F


class AllKinds(nn.Module):
    """Every kind of convolution once: 1/2/3-D, transposed with output_padding, groups,
    depthwise, dilation, asymmetric padding (torch's 'same' with even kernels; F.pad before a
    functional conv) and functional calls. Input (1, 4, 16, 16)."""

    def __init__(self) -> None:
        super().__init__()
        self.c2 = nn.Conv2d(4, 8, 3, stride=2, padding=1)
        self.dw = nn.Conv2d(8, 8, 3, padding=2, dilation=2, groups=8, bias=False)
        # pads (1, 2) and (0, 1). Not dilated: torch.onnx writes SAME_UPPER, which onnxruntime 1.32
        # refuses to run with dilation ("Dilation not supported for AutoPadType::SAME_UPPER").
        self.same = nn.Conv2d(8, 6, (4, 2), padding="same")
        self.t2 = nn.ConvTranspose2d(6, 4, 3, stride=2, padding=1, output_padding=1, groups=2)
        self.c1 = nn.Conv1d(4, 6, 5, stride=3, padding=2, groups=2)
        self.t1 = nn.ConvTranspose1d(6, 3, 4, stride=2, padding=1, dilation=2, output_padding=1)
        self.c3 = nn.Conv3d(2, 4, (3, 1, 3), stride=(1, 2, 1), padding=(1, 0, 1))
        self.t3 = nn.ConvTranspose3d(4, 2, 2, stride=2, bias=False)
        self.register_buffer("k", torch.ones(4, 1, 2, 2))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.t2(self.same(self.dw(self.c2(x))))  # (1, 4, 16, 16)
        z = self.t1(self.c1(y.flatten(2)))
        z = F.conv1d(F.pad(z, (1, 2)), torch.ones(1, 3, 3))
        v = self.t3(self.c3(y.reshape(1, 2, 2, 16, 16)))
        w = F.conv2d(y, self.k, stride=2, groups=4)
        return z.sum() + v.sum() + w.sum()


def all_kinds() -> nn.Module:
    return AllKinds()
