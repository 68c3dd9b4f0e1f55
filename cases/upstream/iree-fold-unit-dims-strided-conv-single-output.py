"""[mlir][linalg] -linalg-fold-unit-extent-dims drops a unit loop out of a strided window access (ow * 3 + kw -> kw) and leaves invalid IR

Kind: crash
Ask: a fix: keep the unit loop, or slice the operand to the window's extent, where dropping it turns a strided access into a plain dimension over a longer operand.

What happens: A linalg.generic convolution with one output element, stride 3 and a 2-tap kernel over a 3-long input is valid; after linalg-fold-unit-extent-dims the input map (ow, kw) -> (ow * 3 + kw) becomes (d0) -> (d0) over tensor<3xf32> beside a tensor<2xf32> filter: "'linalg.generic' op inferred input/output operand #1 has shape's dimension #0 to be 3, but found 2". IREE 3.13 fails so on every ONNX Conv with one output element along an axis whose input is longer than the window (e.g. 1x1x4x3 input, 3x2 kernel, strides [1, 3]).

Expected: valid IR; the value is x[0] * w[0] + x[1] * w[1].

Mechanism: mlir/lib/Dialect/Linalg/Transforms/DropUnitDims.cpp (populateFoldUnitExtentDimsPatterns) replaces the unit loop by 0 in every map without keeping operand shapes consistent; PR 173873 (2025-12) extended dropping into non-trivial expressions.
"""
import sys
from iree.compiler import ir, passmanager, version
MLIR = """func.func @conv1d(%x: tensor<3xf32>, %w: tensor<2xf32>, %y: tensor<1xf32>) -> tensor<1xf32> {
  %0 = linalg.generic {indexing_maps = [affine_map<(ow, kw) -> (ow * 3 + kw)>, affine_map<(ow, kw) -> (kw)>, affine_map<(ow, kw) -> (ow)>], iterator_types = ["parallel", "reduction"]} ins(%x, %w : tensor<3xf32>, tensor<2xf32>) outs(%y : tensor<1xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<1xf32>
  return %0 : tensor<1xf32>
}"""
print("MLIR from iree-base-compiler", version.VERSION, "| same as: mlir-opt --linalg-fold-unit-extent-dims conv1d.mlir")
with ir.Context():
    module = ir.Module.parse(MLIR)  # verifies
    try:
        passmanager.PassManager.parse("builtin.module(func.func(linalg-fold-unit-extent-dims))").run(module.operation)
    except Exception as exc:  # the pass leaves IR that fails verification
        print(next(line for line in str(exc).splitlines() if "error:" in line))
        sys.exit(1)
    print(module)
