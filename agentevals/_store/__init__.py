"""The store: the only home of SQL. Table layout for SQLite and PostgreSQL, rollups and bins, catalog
reads, opening a store by address, and reading JSONL records."""
