"""The TensorFlow family: tf.nn eager (`tensorflow`), Keras layers, tf.function graphs and XLA, and the
gradients they share."""
