"""Production limits on judge calls made by a ``ScoringEngine``: spend budgets and a circuit breaker
per judge model (``_budget``, ``_breaker``), joined in one gate (``_gate``) that the judge consults
through a context variable (``agentevals._scoring._judge._scope``)."""
