# Verbatim from the product document shared/seeds/001_d32428ca0e93ff7c.txt, Python block 1.
import hologram as hg
import numpy as np

# Create executor with automatic backend selection
exec = hg.Executor(backend='auto')  # Selects best GPU or CPU

# Allocate buffers
a = exec.allocate(1024, dtype=np.float32)
b = exec.allocate(1024, dtype=np.float32)
c = exec.allocate(1024, dtype=np.float32)

# Load data (zero-copy with memoryview)
a.from_numpy(np.random.randn(1024).astype(np.float32))
b.from_numpy(np.random.randn(1024).astype(np.float32))

# Execute operation
hg.ops.vector_add(exec, a, b, c)

# Get results (zero-copy)
result = c.to_numpy()
