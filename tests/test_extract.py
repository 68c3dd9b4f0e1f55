"""`convdiff extract`: configurations recovered from torch, ONNX and Keras models.

Truth here is what the frameworks themselves compute: every extraction is checked by the
writer against the output size the framework produced for each layer (torch: the actual
forward pass; ONNX: onnxruntime's actual outputs with `run=True`; Keras: the actual call),
the same model must give the same multiset of configurations from its torch module and from
its ONNX export, and hand-derived values pin the translations (ONNX auto_pad/output_shape,
Keras causal/separable/output_padding). Frameworks run only in subprocesses.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path

import pytest

from harness.commands.extract import extract
from harness.commands.extract.layer import LayerConv
from harness.commands.extract.writer import ExtractError, merge, render
from harness.model.loader import case_files, known_issues_dir, load_cases, load_file

ROOT = Path(__file__).resolve().parents[1]

EXPORT = textwrap.dedent("""
    import sys, importlib, torch
    mod, _, attr = sys.argv[1].partition(":")
    model = getattr(importlib.import_module(mod), attr)().eval()
    shape = [int(n) for n in sys.argv[2].split(",")]
    # PRESERVE: an eval-mode export would fold BatchNorm into the conv (adding a bias), which
    # is a different convolution from the module's.
    torch.onnx.export(model, (torch.randn(*shape),), sys.argv[3], dynamo=False,
                      training=torch.onnx.TrainingMode.PRESERVE)
""")


def export_onnx(spec: str, shape: str, path: Path) -> None:
    """The export in a process of its own (forked from an interpreter that imported torch: run_named_scripts)."""
    from tests.helpers import run_named_scripts

    source = f"import sys\nsys.argv[1:] = {[spec, shape, str(path)]!r}\nsys.path.insert(0, {str(ROOT)!r})\n" + EXPORT
    [(rc, out)] = run_named_scripts([(f"export_{path.stem}", source)], path.parent)
    assert rc == 0, out[-2000:]


def configs(layers: list[LayerConv]) -> Counter:
    return Counter(layer.config() for layer in layers)


def kinds(layers: list[LayerConv]) -> set[str]:
    out = set()
    for c in layers:
        out.add(c.op)
        if c.groups > 1:
            out.add("depthwise" if c.groups == c.in_channels else "groups")
        if max(c.dilation) > 1:
            out.add("dilation")
        if any(c.output_padding):
            out.add("output_padding")
        if c.padding == "same" and any(k % 2 == 0 for k in c.kernel_size):
            out.add("asymmetric")
        if not isinstance(c.padding, str) and any(b != a for b, a in c.padding):
            out.add("asymmetric")
    return out


# all_kinds shows every kind of layer the extractor reads; the two real architectures export and run larger
# models (2026-11-29, 2-core AMD EPYC Zen 4, cold: mobilenet_v3_small 9.3 CPU-s, dcgan_generator 4.8, all_kinds
# 4.5), so make test keeps all_kinds and the nightly runs the two
ZOO = pytest.mark.nightly("a real architecture's export and run; all_kinds covers every layer kind in make test")


@pytest.mark.slow
@pytest.mark.parametrize("spec,shape", [
    ("tests.extract_models:all_kinds", "1,4,16,16"),
    pytest.param("harness.commands.extract.zoo:mobilenet_v3_small", "1,3,224,224", marks=ZOO),
    pytest.param("harness.commands.extract.zoo:dcgan_generator", "1,100,1,1", marks=ZOO),
])
def test_torch_and_its_onnx_export_give_the_same_convolutions(spec: str, shape: str, tmp_path: Path) -> None:
    path = tmp_path / "model.onnx"
    export_onnx(spec, shape, path)
    from_torch = extract(spec, [int(n) for n in shape.split(",")], framework="torch")
    from_onnx = extract(str(path), run=True)  # sizes checked against onnxruntime's actual outputs
    assert all(c.out_size is not None for c in from_torch.layers + from_onnx.layers)
    assert configs(from_torch.layers) == configs(from_onnx.layers)
    assert from_torch.distinct == from_onnx.distinct == len(load_file(_write(tmp_path, from_onnx.text)))


def test_all_kinds_model_covers_every_kind(tmp_path: Path) -> None:
    got = extract("tests.extract_models:all_kinds", [1, 4, 16, 16], framework="torch")
    assert kinds(got.layers) >= {"conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                                  "conv_transpose3d", "groups", "depthwise", "dilation", "output_padding", "asymmetric"}
    by_name = {c.name: c for c in got.layers}
    # hand-derived: torch 'same' with kernel (4, 2): totals 3 and 1, the odd one after
    same = by_name["same"]
    assert same.padding == "same" and same.out_size == (8, 8)
    cases = load_file(_write(tmp_path, got.text))
    case = next(c for c in cases if "k2x4" in c.id)
    assert case.geometry.pads == ((1, 2), (0, 1))
    # the functional conv inside the root module, after F.pad: padding 0 on the padded input
    pad1d = next(c for c in got.layers if c.op == "conv1d" and c.kernel_size == (3,))
    assert pad1d.name == "<model>" and pad1d.input_size == (179,) and pad1d.padding == ((0, 0),)
    assert by_name["t1"].output_padding == (1,) and by_name["t1"].out_size == (176,)


ONNX_GRAPH = textwrap.dedent("""
    import sys
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    def w(name, *shape):
        return numpy_helper.from_array(np.ones(shape, np.float32), name)

    nodes = [
        helper.make_node("Conv", ["x", "wa"], ["a"], name="explicit", pads=[0, 1, 2, 1], strides=[2, 1]),
        helper.make_node("Conv", ["a", "wb", "bb"], ["b"], name="same_lower", auto_pad="SAME_LOWER", strides=[2, 2]),
        helper.make_node("ConvTranspose", ["b", "wc"], ["c"], name="out_shape", strides=[2, 2], group=2,
                         output_shape=[6, 12]),
        helper.make_node("ConvTranspose", ["c", "wd"], ["d"], name="same_upper", auto_pad="SAME_UPPER",
                         strides=[2, 2]),
        helper.make_node("ConvTranspose", ["d", "we"], ["e"], name="valid_op", auto_pad="VALID", strides=[2, 2],
                         dilations=[2, 1], output_padding=[1, 0]),
    ]
    inits = [w("wa", 4, 3, 3, 3), w("wb", 4, 4, 2, 2), w("bb", 4), w("wc", 4, 2, 3, 3), w("wd", 4, 4, 2, 2),
             w("we", 4, 2, 3, 3)]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 10, 11])],
                              [helper.make_tensor_value_info("e", TensorProto.FLOAT, [1, 2, 28, 49])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    onnx.save(model, sys.argv[1])
""")


def test_onnx_attributes_are_read_as_the_spec_defines_them(tmp_path: Path) -> None:
    path = tmp_path / "graph.onnx"
    proc = subprocess.run([sys.executable, "-c", ONNX_GRAPH, str(path)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = {c.name: c for c in extract(str(path), run=True).layers}  # run: onnxruntime's own output sizes
    # pads are all begins then all ends
    assert got["explicit"].padding == ((0, 2), (1, 1)) and got["explicit"].out_size == (5, 11)
    # SAME_LOWER: the odd element of the total goes before; (5, 11) / 2 -> (3, 6), totals 1 and 1
    assert got["same_lower"].padding == ((1, 0), (1, 0)) and got["same_lower"].bias
    # output_shape decides the pads: full 7 and 13, wanted 6 and 12 -> total 1, NOTSET puts it first
    assert got["out_shape"].padding == ((1, 0), (1, 0)) and got["out_shape"].out_channels == 4
    assert got["out_shape"].groups == 2 and got["out_shape"].out_size == (6, 12)
    assert got["same_upper"].padding == "same" and got["same_upper"].out_size == (12, 24)
    e = got["valid_op"]
    assert e.padding == ((0, 0), (0, 0)) and e.output_padding == (1, 0) and e.dilation == (2, 1)
    assert e.out_size == ((12 - 1) * 2 + 2 * 2 + 1 + 1, (24 - 1) * 2 + 2 + 1)


KERAS_MODEL = textwrap.dedent("""
    import keras

    def model():
        inp = keras.Input((9, 11, 4))
        x = keras.layers.Conv2D(6, 3, strides=2, padding="same")(inp)
        x = keras.layers.SeparableConv2D(8, 3, padding="same", depth_multiplier=2)(x)
        x = keras.layers.DepthwiseConv2D(3, dilation_rate=2, use_bias=False)(x)
        x = keras.layers.Conv2DTranspose(5, 3, strides=2, padding="same", output_padding=1)(x)
        x = keras.layers.Conv2DTranspose(5, 4, strides=2, padding="same")(x)
        x = keras.layers.Reshape((4 * 8, 5))(x)
        x = keras.layers.Conv1D(3, 3, dilation_rate=2, padding="causal")(x)
        return keras.Model(inp, x)
""")


@pytest.mark.slow
def test_keras_layers_and_their_padding_forms(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "kmodel.py").write_text(KERAS_MODEL)
    monkeypatch.chdir(tmp_path)
    result = extract("kmodel:model", framework="keras")
    got = {c.name: c for c in result.layers}
    assert all(c.layout == "channels_last" for c in got.values())
    assert got["conv2d"].padding == "same" and got["conv2d"].out_size == (5, 6)
    dw, pw = got["separable_conv2d/depthwise"], got["separable_conv2d/pointwise"]
    assert (dw.groups, dw.out_channels, dw.bias) == (6, 12, False)
    assert (pw.kernel_size, pw.in_channels, pw.out_channels, pw.bias) == ((1, 1), 12, 8, True)
    assert got["depthwise_conv2d"].groups == 8 and got["depthwise_conv2d"].padding == "valid"
    # Keras asks for (1 - 1) * 2 + 3 - 2 + 1 = 2 rows from a full length of 3: crop one at the end
    assert got["conv2d_transpose"].padding == ((0, 1), (0, 1))
    assert got["conv2d_transpose_1"].padding == "same"
    assert got["conv1d"].padding == ((4, 0),) and got["conv1d"].op == "conv1d"
    assert len(load_file(_write(tmp_path, result.text))) == 7


def test_identical_layers_merge_and_name_their_layers(tmp_path: Path) -> None:
    base = dict(op="conv2d", batch=1, in_channels=8, out_channels=8, input_size=(5, 5), kernel_size=(3, 3),
                stride=(1, 1), padding=((1, 1), (1, 1)), output_padding=(0, 0), dilation=(1, 1), groups=1,
                bias=False, layout="channels_first", dtype="float32", out_size=(5, 5))
    layers = [LayerConv(name="a", **base), LayerConv(name="b", **base),
              LayerConv(name="c", **{**base, "padding": ((0, 1), (1, 0)), "out_size": (4, 4)})]
    groups = merge(layers)
    assert [g.names for g in groups] == [["a", "b"], ["c"]]
    text = render(groups, "My Net", ["header"])
    assert "# 2 layers: a, b" in text and "padding: [[0, 1], [1, 0]]" in text and "padding: 1" in text
    assert "# convdiff: cases" in text.splitlines()[:2]  # collected by pytest wherever the user writes it
    cases = load_file(_write(tmp_path, text))
    assert [c.id for c in cases] == ["my_net_01_conv2d_k3", "my_net_02_conv2d_k3"]
    assert cases[0].tags == ("my_net", "extracted")


def _write(tmp: Path, text: str) -> Path:
    path = tmp / "out.yaml"
    path.write_text(text)
    return path


def cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "harness.commands.cli", *args], cwd=cwd, capture_output=True, text=True)


def test_cli_writes_a_file_that_validates(tmp_path: Path) -> None:
    out = tmp_path / "m.yaml"
    proc = cli("extract", "harness.commands.extract.zoo:dcgan_generator", "--input-shape", "1,100,1,1", "-o", str(out),
               "--batch", "2", "--dtype", "float64")
    assert proc.returncode == 0, proc.stderr
    assert "5 convolutions, 5 distinct" in proc.stderr
    cases = load_file(out)
    assert {c.batch for c in cases} == {2} and {c.dtype for c in cases} == {"float64"}
    assert [c.geometry.out_size for c in cases] == [(4, 4), (8, 8), (16, 16), (32, 32), (64, 64)]
    assert cli("validate", str(out)).returncode == 0


# the small model of every layer kind (tests/extract_models.py, 4 input channels), not a torchvision one: each
# parameter is a process that imports the model (5.7 s for resnet18's failed forward pass, 2026-12-02, 2-core AMD EPYC
# Zen 5, empty cache)
@pytest.mark.parametrize("args,problem", [
    (("nosuch.onnx",), "no such file"),
    (("tests.extract_models:all_kinds",), "needs --input-shape"),
    (("tests.extract_models:all_kinds", "--input-shape", "1,3,x"), "comma-separated integers"),
    (("harness.commands.extract.zoo:nosuch", "--framework", "torch", "--input-shape", "1,3,8,8"), "cannot load"),
    (("tests.extract_models:all_kinds", "--input-shape", "1,5,16,16"), "forward pass failed"),
    # found by the auto probe, which imports the model before any framework
    (("no_such_module_xyz:f", "--input-shape", "1,3,8,8"),
     "cannot import 'no_such_module_xyz:f': ModuleNotFoundError: No module named 'no_such_module_xyz'"),
    (("json:dumps", "--input-shape", "1,3,8,8"), "'json:dumps': cannot tell torch from keras (imports neither)"),
])
def test_cli_bad_input_is_one_line_and_exit_2(args: tuple[str, ...], problem: str) -> None:
    proc = cli("extract", *args)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and problem in lines[0] and "Traceback" not in proc.stderr


def test_extract_error_is_an_exception_type() -> None:
    with pytest.raises(ExtractError):
        extract("nosuch.onnx")


def test_model_corpus_is_collected_and_uses_the_shared_known_issues() -> None:
    files = case_files([ROOT / "cases"])
    models = [f for f in files if f.parent.name == "models"]
    assert {f.stem for f in models} >= {"resnet18", "mobilenet_v3_small", "deeplabv3_resnet50", "r3d_18",
                                        "dcgan_generator", "wav2vec2_front_end"}
    assert known_issues_dir(ROOT / "cases" / "models") == ROOT / "cases"
    cases = load_cases(models)
    assert {c.tier for c in cases} == {"full"} and all("extracted" in c.tags for c in cases)
    ops = {c.op for c in cases}
    assert {"conv1d", "conv2d", "conv3d", "conv_transpose2d"} <= ops
    assert any(c.groups == c.in_channels > 1 for c in cases) and any(max(c.dilation) > 1 for c in cases)
    proc = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "cases/models/dcgan_generator.yaml",
                           "--convdiff-backends", "torch", "-p", "no:cacheprovider"], cwd=ROOT, capture_output=True, text=True)
    assert "dcgan_generator_01_convt2d_k4[torch-cpu]" in proc.stdout, proc.stdout[-2000:]
