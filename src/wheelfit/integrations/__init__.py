"""Where PyTorch is really installed: lock files, uv projects, pip files, CI and Docker outputs.

Each module here turns plans (:mod:`wheelfit.app`) into the files and values another tool reads, one layer above
the orchestration it calls: system state (environment variables, network, working directory) is passed in and
nothing prints. :mod:`.targets` plans once per ``--target``, which every command with several targets shares.
"""
