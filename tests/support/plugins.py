"""Broken detector plugins as real distributions: wheels registered in the ``wheelfit.providers`` entry-point
group, installed by pip into a directory that a wheelfit subprocess gets on ``PYTHONPATH`` (``sys.path`` is what
plugin discovery reads, as :mod:`importlib.metadata` does)."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from tests.conftest import hermetic_env
from tests.support.wheels import make_wheel

__all__ = ["FAULTS", "NVIDIA_NIGHTLY", "install_plugins", "plugin_wheel"]

#: entry-point name -> (distribution, version, module source). Each prints, as a careless plugin does.
FAULTS: Mapping[str, tuple[str, str, str]] = {
    "crashy": (
        "wheelfit-crashy",
        "0.3.1",
        "class P:\n"
        "    name = 'crashy'\n"
        "    def probe(self, system):\n"
        "        print('crashy was here')\n"
        "        raise RuntimeError('kaboom in the plugin')\n"
        "PROVIDER = P()\n",
    ),
    "sleepy": (
        "wheelfit-sleepy",
        "1.0.0",
        "import time\n"
        "class P:\n"
        "    name = 'sleepy'\n"
        "    def probe(self, system):\n"
        "        time.sleep(600)\n"
        "PROVIDER = P()\n",
    ),
    # Prints for as long as the process lives: during detection, and while the JSON is being written.
    "chatty": (
        "wheelfit-chatty",
        "0.1.0",
        "import time\n"
        "class P:\n"
        "    name = 'chatty'\n"
        "    def probe(self, system):\n"
        "        while True:\n"
        '            print(\'{"chatty": "noise"}\', flush=True)\n'
        "            time.sleep(0.01)\n"
        "PROVIDER = P()\n",
    ),
    "liar": (
        "wheelfit-liar",
        "2.0",
        "from wheelfit_probekit import ProviderResult\n"
        "class P:\n"
        "    name = 'liar'\n"
        "    def probe(self, system):\n"
        "        print('liar says hello')\n"
        "        return ProviderResult(\n"
        "            accelerators=[{'vendor': 'nvidia', 'name': 'Fake', 'source': 'liar', 'compute_capability': 8.6},\n"
        "                          'junk', {'vendor': 'amd', 'name': 'x', 'source': 'y', 'memory': float('nan')}],\n"
        "            probes=['not a probe record'], cpu=42)\n"
        "PROVIDER = P()\n",
    ),
    "missing": ("wheelfit-missing", "0.0.1", "import wheelfit_no_such_module_anywhere\nPROVIDER = None\n"),
    # Hangs while being imported: loading happens under the deadline too.
    "stuckimport": ("wheelfit-stuckimport", "0.2", "import time\ntime.sleep(600)\nPROVIDER = None\n"),
}

#: A nightly NVIDIA detector that registers the name ``nvidia`` (ahead of wheelfit-nvidia on sys.path) and crashes.
NVIDIA_NIGHTLY = (
    "wheelfit-nvidia-nightly",
    "0.3.0.dev1",
    "class P:\n"
    "    name = 'nvidia'\n"
    "    def probe(self, system):\n"
    "        raise RuntimeError('NVML symbol nvmlDeviceGetFoo not found')\n"
    "PROVIDER = P()\n",
)


def plugin_wheel(directory: Path, dist: str, version: str, entry: str, source: str) -> Path:
    """A wheel of ``dist`` whose module (the distribution's name, ``-`` as ``_``) is ``source`` and which registers
    ``entry = <module>:PROVIDER`` in the ``wheelfit.providers`` group."""
    module = re.sub(r"[-.]+", "_", dist).lower()
    entry_points = f"[wheelfit.providers]\n{entry} = {module}:PROVIDER\n"
    files = {f"{module}/__init__.py": source, f"{module}-{version}.dist-info/entry_points.txt": entry_points}
    return make_wheel(directory, dist, version, files=files)


def install_plugins(wheels: list[Path], site: Path) -> Path:
    """``pip install --target site`` the wheels (no index, no dependencies): the files a real installer writes."""
    argv = [sys.executable, "-m", "pip", "--disable-pip-version-check", "install", "-q", "--no-deps", "--no-index"]
    subprocess.run([*argv, "--target", str(site), *map(str, wheels)], check=True, env=hermetic_env(), timeout=120)
    return site
