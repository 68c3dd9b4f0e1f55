"""paddle.inference with oneDNN: after a predictor's run raises, the next predictor's convolution applies the failed model's activation

Kind: wrong-value
Ask: a fix: a run that raises should leave nothing behind that a later predictor picks up.

What happens: In one process, a saved NHWC Conv2D(4, 4, 3) + bias + ReLU model fails in predictor.run() ("Broadcast dimension mismatch", #43105). A second, unrelated model, a plain NCHW Conv2D(4, 4, 3) without bias or activation, then returns ReLU of its result: every negative output is 0 (19 of 36 here). The same with tanh, sigmoid and hardswish (their function of the right result, to 1e-6), with conv3d, and with another input shape. Only the first convolution after the failure is hit: running the second predictor again gives the right values. With the first model run successfully (NCHW), nothing leaks.

Expected: the second predictor's output equals the eager layer's, whatever an earlier predictor did.

Mechanism: not located; the state survives the exception out of AnalysisPredictor::Run (the end-of-run oneDNN reset is skipped?) and is consumed by the next oneDNN conv.
"""
import tempfile, numpy as np, paddle
print("paddle", paddle.__version__)
def predictor(layer, shape):  # paddle.jit.save, then a CPU predictor (oneDNN on by default)
    path = tempfile.mkdtemp() + "/m"
    paddle.jit.save(layer, path, input_spec=[paddle.static.InputSpec(shape, "float32")])
    config = paddle.inference.Config(path + ".json", path + ".pdiparams"); config.disable_glog_info()
    return paddle.inference.create_predictor(config)
def run(p, x):
    p.get_input_handle(p.get_input_names()[0]).copy_from_cpu(x); p.run()
    return p.get_output_handle(p.get_output_names()[0]).copy_to_cpu()
paddle.seed(0)
try:
    run(predictor(paddle.nn.Sequential(paddle.nn.Conv2D(4, 4, 3, data_format="NHWC"), paddle.nn.ReLU()), [1, 5, 5, 4]), np.ones((1, 5, 5, 4), "float32"))
except Exception as exc:
    print("NHWC conv + bias + relu raised:", [ln for ln in str(exc).splitlines() if "Error" in ln][0].strip()[:90])
plain, x = paddle.nn.Conv2D(4, 4, 3, bias_attr=False), np.random.default_rng(0).standard_normal((1, 4, 5, 5)).astype("float32")
eager, y = plain(paddle.to_tensor(x)).numpy(), run(predictor(plain, [1, 4, 5, 5]), x)
print("plain conv: negatives eager", int((eager < 0).sum()), "predictor", int((y < 0).sum()), "max |diff|", float(np.abs(y - eager).max()))
raise SystemExit(0 if np.allclose(y, eager, atol=1e-4) else 1)
