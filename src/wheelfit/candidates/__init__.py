"""Build candidates, in one package: the model (:mod:`.model`: a build of one torch version for one platform, the
facts it rests on), the knowledge base's (:mod:`.knowledge`, with what was measured on this machine over them),
a variant index's (:mod:`.variants`), and one build across platforms (:mod:`.builds`, ``wheelfit kb show``).
Pure; gathered with I/O by :mod:`wheelfit.index.candidates` and judged by :mod:`wheelfit.resolve`. Each module is
imported by name."""
