"""``wheelfit configure pip``: registered on the app when this module is imported."""
