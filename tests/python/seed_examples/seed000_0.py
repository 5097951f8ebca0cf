# Verbatim from the product document shared/seeds/000_1cebea802daffca1.txt, Python block 0.
import hologram as hg

# Automatic backend selection (Metal → CUDA → CPU)
exec = hg.Executor(backend='auto')

# Specific backend
exec_cpu = hg.Executor(backend='cpu')
exec_metal = hg.Executor(backend='metal')  # Apple Silicon only
exec_cuda = hg.Executor(backend='cuda')    # NVIDIA GPU only

# Check availability
hg.is_metal_available()  # bool
hg.is_cuda_available()   # bool
hg.get_default_backend() # 'metal' | 'cuda' | 'cpu'
