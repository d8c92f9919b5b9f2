"""Reports: terminal tables and JSON."""
