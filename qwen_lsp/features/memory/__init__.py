"""Auto-memory as a feature: its turn hooks, fork runner, fork permissions and model access."""
