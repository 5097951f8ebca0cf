# Verbatim from the product document shared/seeds/001_d32428ca0e93ff7c.txt, Python block 3.
import hologram as hg

# Check availability
print(f"Metal available: {hg.backend.is_metal_available()}")
print(f"CUDA available: {hg.backend.is_cuda_available()}")
print(f"Default backend: {hg.backend.get_default_backend()}")

# Explicit selection with error handling
try:
    exec = hg.Executor(backend='cuda')
    print("Using CUDA backend")
except Exception as e:
    print(f"CUDA not available: {e}")
    exec = hg.Executor(backend='cpu')
    print("Falling back to CPU")
