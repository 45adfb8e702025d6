"""The LLM judge: requests through LiteLLM, structured replies, retries, secrets and credentials."""
