"""TFLiteConverter cannot convert tf.nn.conv2d_transpose with explicit padding to TRANSPOSE_CONV without TF Select

Kind: valid-refused
Ask: Support explicit padding when legalizing Conv2DBackpropInput (TRANSPOSE_CONV with VALID padding and a slice is the same convolution and converts), or an error that names explicit padding as the reason.

What happens: tf.nn.conv2d_transpose(x, w, [1, 5, 5, 4], 1, padding=[[0, 0], [1, 1], [1, 1], [0, 0]]) on a 1x5x5x4 input with a 3x3 kernel, which TensorFlow runs, does not convert with the builtin op set: TFLiteConverter fails with "'tf.Conv2DBackpropInput' op is neither a custom op nor a flex op", the message for any op without a TFLite lowering, which points the user to TF Select. The same convolution written as padding="VALID" with the full 1x7x7x4 output and a crop of one element per side converts (TRANSPOSE_CONV + STRIDED_SLICE) and runs in LiteRT 2.3.0 within 2.4e-6 of a float64 reference.

Expected: tf.nn.conv2d_transpose accepts explicit padding (https://www.tensorflow.org/api_docs/python/tf/nn/conv2d_transpose), and the converter can express it with builtin ops, as the VALID form shows; failing that, an error that names the padding.

Mechanism: tensorflow/compiler/mlir/lite/transforms/legalize_patterns.td, the LegalizeConv2DBackpropInput pattern, matches only IsSameOrValid:$padding (TransposeConvOptions holds SAME or VALID only); an EXPLICIT Conv2DBackpropInput matches no pattern, stays a TF op, and the builtins-only target refuses it with the generic message.
"""
import os
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"

import tensorflow as tf

print("tensorflow", tf.__version__)
w = tf.ones((3, 3, 4, 4))  # (kh, kw, C_out, C_in)
explicit = tf.function(lambda x: tf.nn.conv2d_transpose(x, w, [1, 5, 5, 4], 1, [[0, 0], [1, 1], [1, 1], [0, 0]]))
cropped = tf.function(lambda x: tf.nn.conv2d_transpose(x, w, [1, 7, 7, 4], 1, "VALID")[:, 1:-1, 1:-1, :])  # the same values
status = 0
for name, fn in (("padding=[[0, 0], [1, 1], [1, 1], [0, 0]]", explicit), ("padding='VALID', then a crop", cropped)):
    converter = tf.lite.TFLiteConverter.from_concrete_functions([fn.get_concrete_function(tf.TensorSpec([1, 5, 5, 4]))], fn)
    converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS]  # builtin ops only, no TF Select
    try:
        converter.convert()
        print(f"{name}: converted")
    except Exception as exc:  # the converter's ConverterError
        status = status or int(fn is explicit)
        print(f"{name}: refused:", next((ln.split("error: ")[-1] for ln in str(exc).splitlines() if "error:" in ln), exc))
raise SystemExit(status)  # 1: the explicit-padding form was refused
