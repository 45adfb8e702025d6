"""agentevals for LiteLLM."""
