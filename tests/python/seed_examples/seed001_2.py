# Verbatim from the product document shared/seeds/001_d32428ca0e93ff7c.txt, Python block 2.
import torch
import hologram as hg
import hologram_torch as hg_torch

# Create executor
exec = hg.Executor(backend='metal')  # Use Metal on Apple Silicon

# Functional API
x = torch.randn(1024)
y = torch.randn(1024)
z = hg_torch.functional.add(exec, x, y)

# nn.Module API
class MyModel(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.executor = hg.Executor(backend='auto')
        self.linear = hg_torch.nn.Linear(self.executor, 512, 256)
        self.relu = hg_torch.nn.ReLU()

    def forward(self, x):
        x = self.linear(x)
        x = hg_torch.functional.relu(self.executor, x)
        return x

model = MyModel()
output = model(torch.randn(32, 512))
