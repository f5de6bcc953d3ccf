"""``wheelfit env``: registered on the app when this module is imported."""
