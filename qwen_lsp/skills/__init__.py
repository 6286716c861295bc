"""skills core."""
