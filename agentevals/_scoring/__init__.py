"""One run -> one record: the scorer and its steps, the judge, and the limits on judge calls."""
