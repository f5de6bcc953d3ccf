"""Orchestration, in one place: each module runs one command's data flow (probe -> report -> candidates -> plan ->
install set -> backend -> verify) from the pure core and the I/O edges below it, with the system state passed in.
:mod:`wheelfit.api` re-exports what a library caller uses; ``cli/`` parses options into
:mod:`wheelfit.options` values and renders what comes back."""
