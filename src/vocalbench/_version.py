"""The package version (a leaf, so that any layer may record it)."""

__version__ = "0.1.0"
