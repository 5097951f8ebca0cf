"""One set of CPU threads for torch and hologram: where torch's CPU build runs on OpenMP,
hologram's CPU executors run their parallel parts as OpenMP regions of the same runtime
(``hologram.set_cpu_threading('openmp')``). Two pools on the same cores each spin after their
parallel regions: a Llama training step through backend="hologram" (2 cores) took ~41 ms with
two pools and ~32 ms with one (docs/performance.md "One set of threads with torch")."""
import os

import torch

import hologram as hg


def share_torch_threads():
    """Chooses 'openmp' when torch's parallel backend is OpenMP and HOLOGRAM_CPU_THREADING does
    not say otherwise; returns the choice in effect."""
    if os.environ.get("HOLOGRAM_CPU_THREADING", "").strip():
        return hg.cpu_threading()   # the user's choice (read by the library)
    if "parallel backend: OpenMP" in torch.__config__.parallel_info():
        try:
            hg.set_cpu_threading("openmp")
        except hg.UnsupportedError:   # a torch build with OpenMP linked in an unusual way
            pass
    return hg.cpu_threading()
