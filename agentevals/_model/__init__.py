"""What a run and a record are: messages, runs, converters, results, failures, errors, versions and
thresholds. Imports nothing of agentevals above it."""
