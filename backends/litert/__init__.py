"""LiteRT (TensorFlow Lite): the TFLite converter and the LiteRT interpreter, float and int8."""
