"""One version, written once (include/hologram/core.h's HG_VERSION_MAJOR/MINOR/PATCH): the
installed package's metadata (pyproject.toml reads the header), hologram.__version__ (the
library's hg_version) and build_info agree with the header. The C side (CMake's project
version, hg_version, `hologram --version`) is checked in test_core_api and test_examples."""
import importlib.metadata
import pathlib
import re

import hologram as hg

HEADER = pathlib.Path(__file__).resolve().parents[2] / "include" / "hologram" / "core.h"


def test_one_version_everywhere():
    text = HEADER.read_text()
    parts = [re.search(rf"^#define HG_VERSION_{p} (\d+)$", text, re.M) for p in
             ("MAJOR", "MINOR", "PATCH")]
    assert all(parts), "the header must define HG_VERSION_MAJOR/MINOR/PATCH as numbers"
    want = ".".join(m.group(1) for m in parts)
    assert hg.__version__ == want
    assert importlib.metadata.version("hologram") == want
    assert hg.build_info()["version"] == want
    assert not re.search(r'^version\s*=', (HEADER.parents[2] / "pyproject.toml").read_text(),
                         re.M), "pyproject.toml must take the version from the header"
