"""MkDocs hook (``hooks:`` in mkdocs.yml): adds the generated pages to the site before the nav is built.

A hook rather than a plugin: it needs no package of its own, and the pages exist only in the build, never as files
someone could edit by mistake. ``WHEELFIT_DOCS_KB=FILE`` builds the tables from another knowledge-base file.
"""

from __future__ import annotations

import os

from docgen import pages
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files


def on_files(files: Files, config: MkDocsConfig) -> Files:
    for uri, text in pages(os.environ.get("WHEELFIT_DOCS_KB") or None).items():
        files.append(File.generated(config, uri, content=text))
    return files
