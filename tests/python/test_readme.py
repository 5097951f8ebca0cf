"""The README's Python quickstarts run as written (the PyTorch one where a supported torch is
installed)."""
import pathlib
import re

import pytest

from conftest import import_hologram_torch

ROOT = pathlib.Path(__file__).resolve().parents[2]
BLOCKS = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), re.S)


def test_readme_has_python_blocks():
    assert BLOCKS, "README has no Python block"


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_readme_python_block_runs(code):
    if "hologram_torch" in code:
        import_hologram_torch()
    elif "import torch" in code:
        pytest.importorskip("torch")
    exec(compile(code, "README.md", "exec"), {"__name__": "__readme__"})  # noqa: S102
