"""Compiled core of glns. Private: use the public API in :mod:`glns`."""
