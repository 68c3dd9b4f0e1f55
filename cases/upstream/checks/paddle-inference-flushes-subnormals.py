"""Paddle Inference's CPU predictor flushes subnormal inputs and results to zero; eager Paddle keeps them

Measures: a Conv2D layer saved with paddle.jit.save and run by a paddle.inference predictor (default CPU Config),
on a subnormal input with normal products (x = 2^-128, w = 16) and on normal inputs whose products and result are
subnormal (x = w = 2^-65), float32, against the exact values and eager Paddle. Exit 1 where the predictor gives
zero (AnalysisPredictor::Run sets FTZ and DAZ: paddle/fluid/platform/denormal.cc, ScopedFlushDenormal).
"""
import os
import sys
import tempfile
import warnings

os.environ.setdefault("GLOG_minloglevel", "2")
warnings.filterwarnings("ignore")
import numpy as np  # noqa: E402
import paddle  # noqa: E402
import paddle.inference as pi  # noqa: E402

print("paddle", paddle.__version__)
flushed = False
with tempfile.TemporaryDirectory() as tmp:
    for what, ex, ew in (("subnormal input, normal result", -128, 4), ("normal inputs, subnormal result", -65, -65)):
        conv = paddle.nn.Conv2D(4, 1, 3, bias_attr=False)
        conv.weight.set_value(np.full((1, 4, 3, 3), 2.0 ** ew, np.float32))
        x = np.full((1, 4, 5, 5), 2.0 ** ex, np.float32)
        path = os.path.join(tmp, f"m{ex}")
        paddle.jit.save(conv, path, input_spec=[paddle.static.InputSpec([1, 4, 5, 5], "float32")])
        cfg = pi.Config(path + ".json" if os.path.exists(path + ".json") else path + ".pdmodel", path + ".pdiparams")
        cfg.disable_gpu()
        cfg.disable_glog_info()
        pred = pi.create_predictor(cfg)
        pred.get_input_handle(pred.get_input_names()[0]).copy_from_cpu(x)
        pred.run()
        got = float(pred.get_output_handle(pred.get_output_names()[0]).copy_to_cpu()[0, 0, 0, 0])
        eager = float(conv(paddle.to_tensor(x)).numpy()[0, 0, 0, 0])
        want = 36 * 2.0 ** ex * 2.0 ** ew
        print(f"float32 {what}: predictor {got!r}, eager {eager!r}, exact {want!r}")
        flushed |= got == 0.0 and want != 0.0
sys.exit(1 if flushed else 0)
