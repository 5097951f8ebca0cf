"""The README's Python quickstart runs as written."""
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_readme_python_blocks_run():
    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert blocks, "README has no Python block"
    for code in blocks:
        exec(compile(code, "README.md", "exec"), {"__name__": "__readme__"})  # noqa: S102
