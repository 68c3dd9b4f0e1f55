"""Source text shared by the PT2E reproducer templates (torch-pt2e, executorch): an observer that pins the case's
scales and zero points instead of measuring them. The scripts define it themselves: they import no convdiff code."""

PINNED_OBSERVER = '''
class PinnedObserver(ObserverBase):
    """An observer that observes nothing: calculate_qparams() returns the scales and zero points given."""

    def __init__(self, scales, zero_points, dtype=torch.int8, qscheme=torch.per_channel_symmetric, ch_axis=0,
                 quant_min=-128, quant_max=127, is_dynamic=False, **_):
        super().__init__(dtype=dtype, is_dynamic=False)
        self.qscheme, self.ch_axis, self.quant_min, self.quant_max = qscheme, ch_axis, quant_min, quant_max
        self.register_buffer("scale", torch.tensor(scales, dtype=torch.float32))
        self.register_buffer("zero_point", torch.tensor(zero_points, dtype=torch.int32))

    def forward(self, x):
        return x

    def calculate_qparams(self):
        return self.scale, self.zero_point
'''
