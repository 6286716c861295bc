"""Compaction core: thresholds now; compression and microcompaction plug in here."""
