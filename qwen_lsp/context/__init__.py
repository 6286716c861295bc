"""context core."""
