"""Reading package indexes: the client (:mod:`.client`: pages and PEP 658 metadata, cached and revalidated,
offline from the cache), the index configuration (:mod:`.config`), indexes on disk (:mod:`.local`), and the
candidates gathered from the PyTorch index (:mod:`.candidates`, :mod:`.variant_index`). The pages' models are
:mod:`wheelfit.simple`. Each module is imported by name: nothing is loaded here."""
