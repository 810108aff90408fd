"""Plain-Python twins and references of the native operator library (glns._core)."""
