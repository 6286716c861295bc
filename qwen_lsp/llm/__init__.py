"""llm core."""
