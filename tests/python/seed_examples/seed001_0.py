# Verbatim from the product document shared/seeds/001_d32428ca0e93ff7c.txt, Python block 0.
import hologram as hg

# Explicit backend selection
exec_cpu = hg.Executor(backend='cpu')
exec_metal = hg.Executor(backend='metal')   # Apple Silicon
exec_cuda = hg.Executor(backend='cuda')     # NVIDIA GPU

# Automatic selection (best available)
exec = hg.Executor(backend='auto')
