"""variantlib's whole pipeline as the oracle: ``get_variants_by_priority`` on PyTorch 2.9/2.10
metadata converted to the v0.2.0 shape by hand (priority in ``providers.priority.static-properties``), with stand-in
provider plugins that report the grid's configs through variantlib's real plugin subprocess.

This also proves wheelfit reads the v0.2.0 generation (``providers.{ns}.static-properties``)
to the same order.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from variantlib import api
from variantlib.plugins import loader

from wheelfit.variants.metadata import parse_variants_json
from wheelfit.variants.ranking import rank_variants

from .oracle import Configs, amd, intel, nvidia, raw

PLUGIN_MODULE = """
import json, os
from dataclasses import dataclass

@dataclass
class VariantFeatureConfig:
    name: str
    values: list
    multi_value: bool = False

class _Provider:
    def __init__(self, namespace):
        self.namespace = namespace
    def get_supported_configs(self):
        table = json.loads(os.environ["ORACLE_CONFIGS"])
        return [VariantFeatureConfig(n, v, m) for n, v, m in table.get(self.namespace, [])]
    get_all_configs = get_supported_configs

nvidia = _Provider("nvidia")
amd = _Provider("amd")
intel = _Provider("intel")
"""


def to_v020(data: dict[str, Any]) -> dict[str, Any]:
    """The v0.0.3 file in the v0.2.0 shape: static properties move into their provider."""
    providers: dict[str, Any] = {}
    for ns, p in data["providers"].items():
        if p.get("install-time", True) is False:
            providers[ns] = {"static-properties": data["static-properties"][ns]}
        else:
            providers[ns] = {"requires": p["requires"], "plugin-api": f"oracle_plugins:{ns}"}
    return {
        "$schema": "https://variants-schema.wheelnext.dev/v0.2.0.json",
        "default-priorities": {"namespace": data["default-priorities"]["namespace"]},
        "providers": providers,
        "variants": data["variants"],
    }


MACHINES: list[tuple[str, Configs]] = [
    ("none", {}),
    ("nvidia 12.4 sm_86", {"nvidia": nvidia((12, 4), (8, 6))}),
    ("nvidia 13.0 sm_90", {"nvidia": nvidia((13, 0), (9, 0))}),
    ("nvidia 12.9 sm_100", {"nvidia": nvidia((12, 9), (10, 0))}),
    ("nvidia 13.1 sm_120 + amd gfx942 7.1", {"nvidia": nvidia((13, 1), (12, 0)), "amd": amd(["gfx942"], "7.1")}),
    ("amd gfx90a 6.4", {"amd": amd(["gfx90a"], "6.4")}),
    ("intel bmg + nvidia 12.8 sm_75", {"intel": intel(["20.1.0"]), "nvidia": nvidia((12, 8), (7, 5))}),
]


@pytest.mark.parametrize("name", ["torch-2.9.0-variants.json", "torch-2.10.0-variants.json"])
@pytest.mark.parametrize(("case", "configs"), MACHINES, ids=[c for c, _ in MACHINES])
def test_full_variantlib_pipeline_agrees(
    realdata: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, case: str, configs: Configs
) -> None:
    (tmp_path / "oracle_plugins.py").write_text(PLUGIN_MODULE)
    # The environment of variantlib's plugin subprocess, not of the code under test.
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    monkeypatch.setenv("ORACLE_CONFIGS", json.dumps(configs))
    monkeypatch.chdir(tmp_path)  # no ./variants.toml user configuration can steer variantlib
    loader.VARIANT_PROVIDER_CACHE_TABLE.clear()
    converted = to_v020(raw(realdata, name))
    expected = [v.label for v in api.get_variants_by_priority(variants_json=converted)]

    meta = parse_variants_json(json.loads(json.dumps(converted)), name)
    assert meta.generation == "0.2"
    assert meta.providers["priority"].static_properties == {"order": ("1", "2", "3")}
    ours = rank_variants(meta, configs, environment={"platform_system": "Linux"}).labels
    assert ours == expected, case
