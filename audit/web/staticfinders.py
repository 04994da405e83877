"""Serve the Plotly bundle of the installed ``plotly`` package as ``vendor/plotly.min.js``.

A staticfiles finder rather than a copy in ``static/``: the bundle always matches the pinned
plotly release, ``runserver`` and the live test server find it, and ``collectstatic`` copies it
for production like any other static file. No CDN is involved.
"""

from __future__ import annotations

from pathlib import Path

import plotly
from django.contrib.staticfiles.finders import BaseFinder
from django.core.checks import Error
from django.core.files.storage import FileSystemStorage

PLOTLY_STATIC_PATH = "vendor/plotly.min.js"
_PACKAGE_DATA = Path(plotly.__file__).resolve().parent / "package_data"


class PlotlyFinder(BaseFinder):
    """Find ``vendor/plotly.min.js`` in plotly's package data."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.storage = FileSystemStorage(location=str(_PACKAGE_DATA))
        self.storage.prefix = "vendor"

    def check(self, **kwargs):
        if not (_PACKAGE_DATA / "plotly.min.js").is_file():
            return [Error(f"plotly.min.js not found in {_PACKAGE_DATA}", id="theoria.E001")]
        return []

    def find(self, path, find_all=False, **kwargs):
        if path != PLOTLY_STATIC_PATH:
            return []
        match = str(_PACKAGE_DATA / "plotly.min.js")
        return [match] if find_all else match

    def list(self, ignore_patterns):
        yield "plotly.min.js", self.storage
