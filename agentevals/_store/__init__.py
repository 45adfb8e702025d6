"""The store: the only home of SQL. The row layout and the schemas of SQLite and PostgreSQL (with the
rollup, the score histogram, the catalog and the labels tables), the one dialect that tells the two
apart, the statements the SQL sinks write with, opening a store by address (JSONL records read into a
SQLite copy), and every read and write of a store: the report's, the viewer's, the export's, the
catalog's and the labels'."""
