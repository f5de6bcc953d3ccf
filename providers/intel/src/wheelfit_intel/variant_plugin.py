"""The ``intel`` wheel-variant provider: the reference plugin's output, computed from wheelfit's detection.

Mirrors ``intel_variant_provider.plugin:IntelVariantPlugin`` (wheelnext/intel-variant-provider):
one multi-value feature ``device_ip`` listing, per GPU in detection order, its Level Zero
device IP (GMDID) and then the IP of the base platform it is compatible with,
de-duplicated, keeping only IPs the reference knows. Like the reference, a GPU whose
device IP is unknown (no Level Zero, or a simulated machine) contributes nothing.
:data:`VARIANT_NAMESPACES` is the pure part the wheelfit core calls;
:class:`IntelVariantPlugin` is the ``variant_plugins`` entry point, its plugin-API machinery
shared with the other providers in ``wheelfit_probekit.variant_plugin``. Stdlib only.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from wheelfit_probekit.variant_plugin import Config, NamespaceFunction, VariantFeatureConfig, VariantPlugin

from . import PROVIDER

__all__ = [
    "FORCE_DEVICE_IP",
    "KNOWN_DEVICE_IPS",
    "VARIANT_NAMESPACES",
    "IntelVariantPlugin",
    "VariantFeatureConfig",
    "intel_all_configs",
    "intel_supported_configs",
]

FORCE_DEVICE_IP = "INTEL_VARIANT_PROVIDER_FORCE_DEVICE_IP"

#: Device IPs the reference knows, in its table order, each with the base platform IP it runs code of
#: (``intel_variant_provider/devices.py`` ``_intel_devips`` @ 281ecc0; ``ocloc ids`` prints the same ids).
KNOWN_DEVICE_IPS: dict[str, str | None] = {
    "35.11.0": None,  # cri
    "35.10.4": None,  # nvl-p
    "30.5.4": "30.0.4",  # nvl-u, nvl-h
    "30.4.4": "30.0.4",  # nvl-s, nvl-hx, nvl-ul
    "30.3.1": "30.0.4",  # wcl
    "30.1.0": "30.0.4",  # ptl-u
    "30.0.4": None,  # ptl-h (base "ptl")
    "20.4.4": "20.1.0",  # lnl-m
    "20.2.0": "20.1.0",  # bmg-g31
    "20.1.0": None,  # bmg-g21 (base "bmg")
    "12.74.4": None,  # arl-h
    "12.71.4": "12.70.4",  # mtl-h
    "12.70.4": None,  # mtl-u, arl-u, arl-s (base "mtl")
    "12.60.7": None,  # pvc
    "12.57.0": "12.55.8",  # acm-g12, dg2-g12
    "12.56.5": "12.55.8",  # acm-g11, dg2-g11, ats-m75
    "12.55.8": None,  # acm-g10, dg2-g10, ats-m150 (base "dg2")
    "12.10.0": None,  # dg1
    "12.4.0": None,  # adl-n
    "12.3.0": None,  # adl-p, rpl-p
    "12.2.0": None,  # adl-s, rpl-s
    "12.1.0": None,  # rkl
    "12.0.0": None,  # tgllp, tgl
}


# -- pure part ------------------------------------------------------------------------


def intel_supported_configs(
    accelerators: Sequence[Mapping[str, Any]], cpu: Mapping[str, Any] | None, environ: Mapping[str, str]
) -> list[Config]:
    """The reference plugin's ``get_supported_configs()`` for a machine described by report-shaped data.

    ``INTEL_VARIANT_PROVIDER_FORCE_DEVICE_IP`` (one IP, or several separated by commas or
    spaces) stands in for the detected IPs and goes through the same compat expansion and
    known-IP filter: a forced unknown IP gives no configs, as in the reference.
    """
    del cpu
    forced = environ.get(FORCE_DEVICE_IP)
    if forced:
        own = [p for p in re.split(r"[,\s;]+", forced.strip()) if p]
    else:
        own = [str(a["device_ip"]) for a in accelerators if a.get("vendor") == "intel" and a.get("device_ip")]
    ips: list[str] = []
    for ip in own:
        for candidate in (ip, KNOWN_DEVICE_IPS.get(ip)):
            if candidate and candidate in KNOWN_DEVICE_IPS and candidate not in ips:
                ips.append(candidate)
    return [("device_ip", ips, True)] if ips else []


def intel_all_configs() -> list[Config]:
    """The reference plugin's ``get_all_configs()``: every known device IP."""
    return [("device_ip", list(KNOWN_DEVICE_IPS), True)]


#: namespace -> pure function over report-shaped data; the contract the wheelfit core relies on.
VARIANT_NAMESPACES: dict[str, NamespaceFunction] = {"intel": intel_supported_configs}


class IntelVariantPlugin(VariantPlugin):
    """``variant_plugins`` entry point for the ``intel`` namespace (class methods: works instantiated or not).

    ``validate_property`` accepts ``intel :: device_ip :: <a known device IP>``: the universe is that one feature.
    """

    namespace = "intel"
    _provider = PROVIDER
    _supported = staticmethod(intel_supported_configs)
    _all = staticmethod(intel_all_configs)
