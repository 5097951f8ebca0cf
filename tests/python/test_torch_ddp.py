"""DistributedDataParallel over hologram_torch layers: 2 processes (gloo, CPU) each train the MLP
on half of every batch; the parameters must equal those of one process training on the whole
batches (DDP averages the ranks' gradients: the gradient of the mean loss over the batch)."""
import os
import socket
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")
from conftest import import_hologram_torch  # noqa: E402

import_hologram_torch()
WORKER = os.path.join(os.path.dirname(__file__), "ddp_worker.py")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return str(s.getsockname()[1])


@pytest.mark.skipif(not torch.distributed.is_available() or
                    not torch.distributed.is_gloo_available(), reason="no gloo backend")
def test_ddp_two_processes_match_one_process(tmp_path):
    env = dict(os.environ, OMP_NUM_THREADS="1")
    single = tmp_path / "single.pt"
    subprocess.run([sys.executable, WORKER, "0", "1", "0", str(single)], check=True, env=env,
                   timeout=300)
    port, ddp = free_port(), tmp_path / "ddp.pt"
    procs = [subprocess.Popen([sys.executable, WORKER, str(r), "2", port, str(ddp)], env=env)
             for r in range(2)]
    for p in procs:
        assert p.wait(timeout=300) == 0
    a, b = torch.load(single), torch.load(ddp)
    assert a.keys() == b.keys()
    for k in a:
        torch.testing.assert_close(b[k], a[k], rtol=1e-5, atol=1e-6, msg=k)
    sys.path.insert(0, os.path.dirname(WORKER))
    import ddp_worker
    init = ddp_worker.model().state_dict()
    assert all(not torch.equal(a[k], init[k]) for k in a if k.endswith("weight"))   # it trained
