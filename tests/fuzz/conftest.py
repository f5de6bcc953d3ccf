"""Hypothesis profiles for the fuzz targets (issue 15): one target per parser of outside input, each module
stating its contract (what the parser may return or raise for any input).

``ci`` (the default) is bounded and reproducible: a fixed number of examples per target, derandomized so
every CI run tries the same inputs, and no example database written into the clone. The whole directory
runs in well under a minute as part of the normal test command (pytest's ``testpaths`` is ``tests``).

``fuzz`` is for long local sessions: many more examples, random, with the database under ``.hypothesis/``
(ignored by git) so a failure found once is replayed first next time::

    HYPOTHESIS_PROFILE=fuzz .venv/bin/python -m pytest -q -p no:cacheprovider tests/fuzz
    HYPOTHESIS_PROFILE=fuzz .venv/bin/python -m pytest -q -p no:cacheprovider tests/fuzz -k nvidia -x

A crash found becomes a test: the smallest failing input goes into an ``@example`` on its target (or a plain
test beside the parser's unit tests), and the parser is fixed.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    max_examples=200,
    deadline=None,
    derandomize=True,
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "fuzz",
    max_examples=20_000,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
