"""The main chat's file changes: how they reach the files (``applier``) and the tools that make them (``tools``)."""
