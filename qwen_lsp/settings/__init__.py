"""Settings: the layered model, what a project may not decide, the endpoint in effect, and what ``doctor`` shows."""
