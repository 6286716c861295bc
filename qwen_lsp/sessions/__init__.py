"""sessions core."""
