"""server core."""
