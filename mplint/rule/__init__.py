"""The rule API: what a check sees and returns, the catalog, and the edits fixes share."""
