"""The run: settings, the files to check, the project's cross-file facts, the cache and the worker pool."""
