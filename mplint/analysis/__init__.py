"""Shared analyses that several checks read (model outputs, layer properties)."""
