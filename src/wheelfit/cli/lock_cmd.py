"""``wheelfit lock``: registered on the app when this module is imported."""
