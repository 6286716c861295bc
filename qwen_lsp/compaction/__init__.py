"""Compaction core: thresholds and the compression prompts; compression and microcompaction plug in here."""
