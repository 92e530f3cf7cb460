"""The live view of a running program (``chronolog run --ui``)."""
