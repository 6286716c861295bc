"""agent core."""
