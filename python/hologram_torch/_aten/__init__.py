"""ATen-level lowering of torch graphs to hologram (the compile backend's passes and tables)."""
