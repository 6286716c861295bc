"""The features a turn is built from, each one package: memory, compaction, follow-ups, skill review, edits."""
