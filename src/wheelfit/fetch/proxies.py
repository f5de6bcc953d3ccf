"""Proxies from the environment (``HTTP_PROXY``, ``HTTPS_PROXY``, ``ALL_PROXY``, ``NO_PROXY``), read from the
environment the run is given rather than the process's.

httpx reads the same variables (``trust_env``) but only from ``os.environ``, through the standard library's
``urllib.request.getproxies``; here they come from the ``environ`` a run is handed, so the library can be
told, and tests can show, which proxy a request takes. The rules are httpx's (httpx/_utils.py,
``get_environment_proxies``), themselves curl's for ``NO_PROXY``
(https://curl.se/libcurl/c/CURLOPT_NOPROXY.html): a lower-case name wins over its upper-case twin, a value
without a scheme is an ``http://`` proxy, ``NO_PROXY=*`` turns every proxy off, and a ``NO_PROXY`` entry is a
host, a domain suffix, an IP address or ``localhost``. As in httpx and curl, loopback addresses are *not*
exempt unless ``NO_PROXY`` names them. ``HTTP_PROXY`` in upper case is ignored when ``REQUEST_METHOD`` is set
(a CGI script, whose ``HTTP_*`` variables come from request headers: "httpoxy", CVE-2016-5385), as urllib does.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping

__all__ = ["environment_proxies"]


def _variables(environ: Mapping[str, str]) -> dict[str, tuple[str, str]]:
    """``scheme -> (variable name, value)`` for every ``*_proxy`` variable, lower case winning (urllib's rule)."""
    found: dict[str, tuple[str, str]] = {}
    for name, value in environ.items():
        if value and name.lower().endswith("_proxy") and name != name.lower():
            found[name.lower()[:-6]] = (name, value)
    if "REQUEST_METHOD" in environ:
        found.pop("http", None)
    for name, value in environ.items():
        if name.endswith("_proxy") and name == name.lower():
            if value:
                found[name[:-6]] = (name, value)
            else:
                found.pop(name[:-6], None)
    return found


def environment_proxies(environ: Mapping[str, str]) -> dict[str, tuple[str, str] | None]:
    """httpx's mount patterns for ``environ``: ``pattern -> (variable, proxy URL)``, or ``None`` for no proxy."""
    found = _variables(environ)
    mounts: dict[str, tuple[str, str] | None] = {}
    for scheme in ("http", "https", "all"):
        if scheme in found:
            name, value = found[scheme]
            mounts[f"{scheme}://"] = (name, value if "://" in value else f"http://{value}")
    no_proxy = found.get("no", ("", ""))[1]
    for host in (h.strip() for h in no_proxy.split(",")):
        if host == "*":
            return {}
        if not host:
            continue
        if "://" in host:
            mounts[host] = None
        elif _is_ip(host, 4) or host.lower() == "localhost":
            mounts[f"all://{host}"] = None
        elif _is_ip(host, 6):
            mounts[f"all://[{host}]"] = None
        else:
            mounts[f"all://*{host}"] = None
    return mounts


def _is_ip(host: str, version: int) -> bool:
    try:
        return ipaddress.ip_address(host.split("/")[0].strip("[]")).version == version
    except ValueError:
        return False
