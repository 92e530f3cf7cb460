"""Naive evaluators written straight from the papers' definitions, to check the engines."""
