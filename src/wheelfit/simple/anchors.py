"""The ``<a>``, ``<base>`` and repository-version ``<meta>`` tags of a PEP 503 page (``html.parser``, ~10 ms to
import, loaded only when a page is parsed)."""

from __future__ import annotations

from html.parser import HTMLParser

__all__ = ["AnchorCollector"]


class AnchorCollector(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.anchors: list[dict[str, str | None]] = []
        self.base: str | None = None
        self.api_version: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "a":
            self.anchors.append(values)
        elif tag == "base" and self.base is None and values.get("href"):
            self.base = values["href"]
        elif tag == "meta" and values.get("name") == "pypi:repository-version":
            self.api_version = values.get("content") or ""
