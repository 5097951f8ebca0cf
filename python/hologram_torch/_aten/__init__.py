"""ATen ops lowered to hologram: the one table (table.py) and the passes of the compile backend."""
