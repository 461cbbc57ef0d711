# SPDX-License-Identifier: MIT
# A PyTorch CPU inference loop (Debian's python3-torch): a small TransformerEncoder's
# forward pass for 1.5 s of the main thread's CPU time; libtorch's OpenMP workers run
# beside it. Deep native stacks (about 50 frames) under about 10 Python frames.
import time

import torch

m = torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(64, 4, 128), 2)
x = torch.randn(16, 8, 64)
end = time.thread_time() + 1.5
with torch.no_grad():
    while time.thread_time() < end:
        m(x)
