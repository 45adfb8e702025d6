"""The store: the only home of SQL. The row layout and the schemas of SQLite and PostgreSQL (with the
rollup, the score histogram and the catalog tables), the one dialect that tells the two apart, the
statements the SQL sinks write with, opening a store by address (JSONL records read into a SQLite
copy), and every read: the report's, the viewer's, the export's and the catalog's."""
