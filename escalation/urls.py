"""URL routes (filled in by the feature that owns this module)."""

from django.urls import path  # noqa: F401

urlpatterns: list = []
