"""The README's Python quickstarts run as written (the PyTorch one where torch is installed)."""
import importlib.util
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_readme_python_blocks_run():
    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert blocks, "README has no Python block"
    for code in blocks:
        if "import torch" in code and importlib.util.find_spec("torch") is None:
            continue
        exec(compile(code, "README.md", "exec"), {"__name__": "__readme__"})  # noqa: S102
