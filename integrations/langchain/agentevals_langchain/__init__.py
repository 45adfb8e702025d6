"""agentevals for LangChain."""
