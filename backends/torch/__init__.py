"""The PyTorch family: eager ATen (`torch`), torch.compile with inductor, the nn.Module form the compiled and
imported paths share, and int8 through torch.ao's quantized engines and PT2E."""
