# Verbatim from the product document shared/seeds/004_f88b9de1de117a85.txt, Python block 0.
import hologram as hg

# Explicit backend selection
exec_metal = hg.Executor(backend='metal')  # Apple Silicon
exec_cuda = hg.Executor(backend='cuda')    # NVIDIA GPU

# Automatic selection
exec = hg.Executor(backend='auto')  # Best available

# PyTorch integration
import hologram_torch as hg_torch
model = hg_torch.nn.Linear(512, 256, backend='metal')
