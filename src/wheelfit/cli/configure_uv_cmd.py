"""``wheelfit configure uv``: registered on the app when this module is imported."""
