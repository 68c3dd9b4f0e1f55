"""The Paddle family: eager paddle.nn.functional (`paddle`, `paddle-output-size`) and Paddle Inference."""
