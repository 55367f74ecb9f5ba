"""Streams: windowed sources, a round of the outer cycle per window."""
