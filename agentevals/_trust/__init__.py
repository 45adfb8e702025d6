"""Can this judge be trusted: people's labels, agreement with them, corrected pass rates, canaries."""
