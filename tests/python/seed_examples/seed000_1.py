# Verbatim from the product document shared/seeds/000_1cebea802daffca1.txt, Python block 1.
import hologram as hg
import torch

# Create executor with automatic backend selection
# (Metal on Apple Silicon, CUDA on NVIDIA GPUs, CPU fallback)
exec = hg.Executor(backend='auto')

# Allocate buffers
buf_a = exec.allocate(1024)
buf_b = exec.allocate(1024)
buf_c = exec.allocate(1024)

# Copy data from PyTorch
a = torch.randn(1024)
b = torch.randn(1024)
buf_a.from_numpy(a.numpy())
buf_b.from_numpy(b.numpy())

# Execute operation (currently via CPU, GPU execution pending)
hg.ops.vector_add(exec, buf_a, buf_b, buf_c, 1024)

# Read result
c = torch.from_numpy(buf_c.to_numpy())
