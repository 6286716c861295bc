"""Auto memory: what the assistant learns across sessions (docs/memory.md)."""
