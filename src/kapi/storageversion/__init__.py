"""KEP-2339 storage versions: registration, garbage collection and storage migration."""
