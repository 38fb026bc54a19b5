"""Converters from public agent trajectories to the replay corpora ``bench/real_sessions.py`` reads (README.md)."""
