"""MkDocs hooks (mkdocs.yml `hooks:`): the reference pages, generated from the code at build time.

`on_files` adds each page of refgen.pages() as a generated file, rendered from the parsers, the case
schema, the backend registry and the known issues as they are now; nothing is written into the source
tree, so the reference cannot fall behind the code. A page that fails to render fails the build.
"""

from __future__ import annotations

import logging
import sys
import time
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

DOCS = Path(__file__).resolve().parent
for _path in (str(DOCS.parent), str(DOCS)):  # the repository (harness, backends) and docs/ (refgen)
    if _path not in sys.path:
        sys.path.insert(0, _path)

from refgen import pages  # noqa: E402 - importable once docs/ is on the path

log = logging.getLogger("mkdocs.convdiff")


def on_files(files: Files, config: Any) -> Files:
    for uri, render in pages().items():
        start = time.perf_counter()
        files.append(File.generated(config, uri, content=render()))
        log.info("generated %s in %.1f s", uri, time.perf_counter() - start)
    return files
