"""Auto memory: what the assistant learns across sessions (chapter §5, spec §4–§7, §10–§11)."""
