"""The contest: a ladder as a service that takes submissions (authors, archives, validation)."""
