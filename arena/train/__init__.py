"""Training environments (placeholder)."""
