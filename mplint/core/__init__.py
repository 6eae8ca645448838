"""The per-file core: read and parse a source once, walk it once with every check, position, suppress and fix."""
