BEGIN TRANSACTION;
CREATE TABLE v1base_bins (bucket TEXT NOT NULL, entity TEXT NOT NULL, scorer_id TEXT NOT NULL, source TEXT NOT NULL, bin INTEGER NOT NULL, count INTEGER NOT NULL, PRIMARY KEY (bucket, entity, scorer_id, source, bin)) WITHOUT ROWID;
CREATE TABLE v1base_drops (bucket TEXT NOT NULL, entity TEXT NOT NULL, scorer_id TEXT NOT NULL, reason TEXT NOT NULL, count INTEGER NOT NULL, PRIMARY KEY (bucket, entity, scorer_id, reason)) WITHOUT ROWID;
CREATE TABLE v1base_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO "v1base_meta" VALUES('schema_version','1');
CREATE TABLE v1base_rollup (bucket TEXT NOT NULL, entity TEXT NOT NULL, scorer_id TEXT NOT NULL, source TEXT NOT NULL, outcome TEXT NOT NULL, skip_reason TEXT NOT NULL, error_type TEXT NOT NULL, rows INTEGER NOT NULL, scores INTEGER NOT NULL, total REAL NOT NULL, squares REAL NOT NULL, low REAL, high REAL, priced INTEGER NOT NULL, cost REAL NOT NULL, tokens INTEGER NOT NULL, PRIMARY KEY (bucket, entity, scorer_id, source, outcome, skip_reason, error_type)) WITHOUT ROWID;
CREATE TABLE v1base_runs (
  run_id TEXT PRIMARY KEY,
  created_at TEXT,
  trace_id TEXT,
  parent_id TEXT,
  thread_id TEXT,
  entity TEXT,
  source TEXT,
  eval_id TEXT,
  models TEXT,
  input TEXT,
  output TEXT,
  ground_truth TEXT,
  request_context TEXT,
  context TEXT,
  started_at TEXT,
  duration_ms REAL,
  input_tokens INTEGER,
  output_tokens INTEGER,
  cost_usd REAL,
  error TEXT,
  metadata TEXT
);
CREATE TABLE v1base_scorers (scorer_id TEXT NOT NULL, scorer_version TEXT NOT NULL, source TEXT NOT NULL, eval_id TEXT NOT NULL, step TEXT NOT NULL, scorer_name TEXT, threshold_min REAL, threshold_max REAL, updated_at TEXT NOT NULL, PRIMARY KEY (scorer_id, scorer_version, source, eval_id, step)) WITHOUT ROWID;
CREATE TABLE v1base_scores (
  id TEXT,
  created_at TEXT,
  run_id TEXT,
  scorer_id TEXT,
  scorer_name TEXT,
  scorer_version TEXT,
  outcome TEXT,
  skip_reason TEXT,
  score REAL,
  raw_score REAL,
  reason TEXT,
  entity TEXT,
  source TEXT,
  eval_id TEXT,
  preprocess_step_result TEXT,
  analyze_step_result TEXT,
  generate_score_step_result TEXT,
  preprocess_prompt TEXT,
  analyze_prompt TEXT,
  generate_score_prompt TEXT,
  generate_reason_prompt TEXT,
  judge_replies TEXT,
  judge_model TEXT,
  prompt_tokens INTEGER,
  completion_tokens INTEGER,
  cost_usd REAL,
  duration_ms REAL,
  error_type TEXT,
  error_message TEXT,
  failed_step TEXT,
  metadata TEXT
);
CREATE UNIQUE INDEX v1base_scores_id_key ON v1base_scores (id);
CREATE INDEX v1base_scores_scorer_created_idx ON v1base_scores (scorer_id, created_at);
CREATE INDEX v1base_scores_run_idx ON v1base_scores (run_id);
CREATE INDEX v1base_scores_entity_created_idx ON v1base_scores (entity, created_at);
CREATE INDEX v1base_scores_eval_idx ON v1base_scores (eval_id);
CREATE INDEX v1base_runs_entity_created_idx ON v1base_runs (entity, created_at);
CREATE TRIGGER v1base_rollup_insert AFTER INSERT ON v1base_scores BEGIN INSERT INTO v1base_rollup (bucket, entity, scorer_id, source, outcome, skip_reason, error_type, rows, scores, total, squares, low, high, priced, cost, tokens) VALUES (substr(NEW.created_at, 1, 13), COALESCE(NEW.entity, ''), COALESCE(NEW.scorer_id, ''), COALESCE(NEW.source, ''), COALESCE(NEW.outcome, ''), COALESCE(NEW.skip_reason, ''), COALESCE(NEW.error_type, ''), 1, (NEW.score IS NOT NULL), COALESCE(NEW.score, 0), COALESCE(NEW.score * NEW.score, 0), NEW.score, NEW.score, (NEW.cost_usd IS NOT NULL), COALESCE(NEW.cost_usd, 0), (COALESCE(NEW.prompt_tokens, 0) + COALESCE(NEW.completion_tokens, 0))) ON CONFLICT (bucket, entity, scorer_id, source, outcome, skip_reason, error_type) DO UPDATE SET rows = v1base_rollup.rows + excluded.rows, scores = v1base_rollup.scores + excluded.scores, total = v1base_rollup.total + excluded.total, squares = v1base_rollup.squares + excluded.squares, priced = v1base_rollup.priced + excluded.priced, cost = v1base_rollup.cost + excluded.cost, tokens = v1base_rollup.tokens + excluded.tokens, low = COALESCE(min(v1base_rollup.low, excluded.low), v1base_rollup.low, excluded.low), high = COALESCE(max(v1base_rollup.high, excluded.high), v1base_rollup.high, excluded.high); END;
CREATE TRIGGER v1base_rollup_delete AFTER DELETE ON v1base_scores BEGIN INSERT INTO v1base_rollup (bucket, entity, scorer_id, source, outcome, skip_reason, error_type, rows, scores, total, squares, low, high, priced, cost, tokens) VALUES (substr(OLD.created_at, 1, 13), COALESCE(OLD.entity, ''), COALESCE(OLD.scorer_id, ''), COALESCE(OLD.source, ''), COALESCE(OLD.outcome, ''), COALESCE(OLD.skip_reason, ''), COALESCE(OLD.error_type, ''), -1, -(OLD.score IS NOT NULL), -COALESCE(OLD.score, 0), -COALESCE(OLD.score * OLD.score, 0), NULL, NULL, -(OLD.cost_usd IS NOT NULL), -COALESCE(OLD.cost_usd, 0), -(COALESCE(OLD.prompt_tokens, 0) + COALESCE(OLD.completion_tokens, 0))) ON CONFLICT (bucket, entity, scorer_id, source, outcome, skip_reason, error_type) DO UPDATE SET rows = v1base_rollup.rows + excluded.rows, scores = v1base_rollup.scores + excluded.scores, total = v1base_rollup.total + excluded.total, squares = v1base_rollup.squares + excluded.squares, priced = v1base_rollup.priced + excluded.priced, cost = v1base_rollup.cost + excluded.cost, tokens = v1base_rollup.tokens + excluded.tokens, low = COALESCE(min(v1base_rollup.low, excluded.low), v1base_rollup.low, excluded.low), high = COALESCE(max(v1base_rollup.high, excluded.high), v1base_rollup.high, excluded.high); UPDATE v1base_rollup SET low = (SELECT MIN(s.score) FROM v1base_scores s WHERE s.scorer_id = COALESCE(OLD.scorer_id, '') AND s.created_at >= substr(OLD.created_at, 1, 13) AND s.created_at < substr(OLD.created_at, 1, 13) || ';' AND COALESCE(s.entity, '') = COALESCE(OLD.entity, '') AND COALESCE(s.source, '') = COALESCE(OLD.source, '') AND COALESCE(s.outcome, '') = COALESCE(OLD.outcome, '') AND COALESCE(s.skip_reason, '') = COALESCE(OLD.skip_reason, '') AND COALESCE(s.error_type, '') = COALESCE(OLD.error_type, '')), high = (SELECT MAX(s.score) FROM v1base_scores s WHERE s.scorer_id = COALESCE(OLD.scorer_id, '') AND s.created_at >= substr(OLD.created_at, 1, 13) AND s.created_at < substr(OLD.created_at, 1, 13) || ';' AND COALESCE(s.entity, '') = COALESCE(OLD.entity, '') AND COALESCE(s.source, '') = COALESCE(OLD.source, '') AND COALESCE(s.outcome, '') = COALESCE(OLD.outcome, '') AND COALESCE(s.skip_reason, '') = COALESCE(OLD.skip_reason, '') AND COALESCE(s.error_type, '') = COALESCE(OLD.error_type, '')) WHERE bucket = substr(OLD.created_at, 1, 13) AND entity = COALESCE(OLD.entity, '') AND scorer_id = COALESCE(OLD.scorer_id, '') AND source = COALESCE(OLD.source, '') AND outcome = COALESCE(OLD.outcome, '') AND skip_reason = COALESCE(OLD.skip_reason, '') AND error_type = COALESCE(OLD.error_type, ''); DELETE FROM v1base_rollup WHERE rows = 0; END;
CREATE TRIGGER v1base_rollup_update AFTER UPDATE ON v1base_scores BEGIN INSERT INTO v1base_rollup (bucket, entity, scorer_id, source, outcome, skip_reason, error_type, rows, scores, total, squares, low, high, priced, cost, tokens) VALUES (substr(OLD.created_at, 1, 13), COALESCE(OLD.entity, ''), COALESCE(OLD.scorer_id, ''), COALESCE(OLD.source, ''), COALESCE(OLD.outcome, ''), COALESCE(OLD.skip_reason, ''), COALESCE(OLD.error_type, ''), -1, -(OLD.score IS NOT NULL), -COALESCE(OLD.score, 0), -COALESCE(OLD.score * OLD.score, 0), NULL, NULL, -(OLD.cost_usd IS NOT NULL), -COALESCE(OLD.cost_usd, 0), -(COALESCE(OLD.prompt_tokens, 0) + COALESCE(OLD.completion_tokens, 0))) ON CONFLICT (bucket, entity, scorer_id, source, outcome, skip_reason, error_type) DO UPDATE SET rows = v1base_rollup.rows + excluded.rows, scores = v1base_rollup.scores + excluded.scores, total = v1base_rollup.total + excluded.total, squares = v1base_rollup.squares + excluded.squares, priced = v1base_rollup.priced + excluded.priced, cost = v1base_rollup.cost + excluded.cost, tokens = v1base_rollup.tokens + excluded.tokens, low = COALESCE(min(v1base_rollup.low, excluded.low), v1base_rollup.low, excluded.low), high = COALESCE(max(v1base_rollup.high, excluded.high), v1base_rollup.high, excluded.high); UPDATE v1base_rollup SET low = (SELECT MIN(s.score) FROM v1base_scores s WHERE s.scorer_id = COALESCE(OLD.scorer_id, '') AND s.created_at >= substr(OLD.created_at, 1, 13) AND s.created_at < substr(OLD.created_at, 1, 13) || ';' AND COALESCE(s.entity, '') = COALESCE(OLD.entity, '') AND COALESCE(s.source, '') = COALESCE(OLD.source, '') AND COALESCE(s.outcome, '') = COALESCE(OLD.outcome, '') AND COALESCE(s.skip_reason, '') = COALESCE(OLD.skip_reason, '') AND COALESCE(s.error_type, '') = COALESCE(OLD.error_type, '')), high = (SELECT MAX(s.score) FROM v1base_scores s WHERE s.scorer_id = COALESCE(OLD.scorer_id, '') AND s.created_at >= substr(OLD.created_at, 1, 13) AND s.created_at < substr(OLD.created_at, 1, 13) || ';' AND COALESCE(s.entity, '') = COALESCE(OLD.entity, '') AND COALESCE(s.source, '') = COALESCE(OLD.source, '') AND COALESCE(s.outcome, '') = COALESCE(OLD.outcome, '') AND COALESCE(s.skip_reason, '') = COALESCE(OLD.skip_reason, '') AND COALESCE(s.error_type, '') = COALESCE(OLD.error_type, '')) WHERE bucket = substr(OLD.created_at, 1, 13) AND entity = COALESCE(OLD.entity, '') AND scorer_id = COALESCE(OLD.scorer_id, '') AND source = COALESCE(OLD.source, '') AND outcome = COALESCE(OLD.outcome, '') AND skip_reason = COALESCE(OLD.skip_reason, '') AND error_type = COALESCE(OLD.error_type, ''); DELETE FROM v1base_rollup WHERE rows = 0; INSERT INTO v1base_rollup (bucket, entity, scorer_id, source, outcome, skip_reason, error_type, rows, scores, total, squares, low, high, priced, cost, tokens) VALUES (substr(NEW.created_at, 1, 13), COALESCE(NEW.entity, ''), COALESCE(NEW.scorer_id, ''), COALESCE(NEW.source, ''), COALESCE(NEW.outcome, ''), COALESCE(NEW.skip_reason, ''), COALESCE(NEW.error_type, ''), 1, (NEW.score IS NOT NULL), COALESCE(NEW.score, 0), COALESCE(NEW.score * NEW.score, 0), NEW.score, NEW.score, (NEW.cost_usd IS NOT NULL), COALESCE(NEW.cost_usd, 0), (COALESCE(NEW.prompt_tokens, 0) + COALESCE(NEW.completion_tokens, 0))) ON CONFLICT (bucket, entity, scorer_id, source, outcome, skip_reason, error_type) DO UPDATE SET rows = v1base_rollup.rows + excluded.rows, scores = v1base_rollup.scores + excluded.scores, total = v1base_rollup.total + excluded.total, squares = v1base_rollup.squares + excluded.squares, priced = v1base_rollup.priced + excluded.priced, cost = v1base_rollup.cost + excluded.cost, tokens = v1base_rollup.tokens + excluded.tokens, low = COALESCE(min(v1base_rollup.low, excluded.low), v1base_rollup.low, excluded.low), high = COALESCE(max(v1base_rollup.high, excluded.high), v1base_rollup.high, excluded.high); END;
CREATE TRIGGER v1base_bins_insert AFTER INSERT ON v1base_scores BEGIN INSERT INTO v1base_bins (bucket, entity, scorer_id, source, bin, count) SELECT substr(NEW.created_at, 1, 13), COALESCE(NEW.entity, ''), COALESCE(NEW.scorer_id, ''), COALESCE(NEW.source, ''), max(0, min(99, CAST(NEW.score * 100 + 1e-09 AS INTEGER))), 1 WHERE NEW.score IS NOT NULL ON CONFLICT (bucket, entity, scorer_id, source, bin) DO UPDATE SET count = v1base_bins.count + excluded.count; END;
CREATE TRIGGER v1base_bins_delete AFTER DELETE ON v1base_scores BEGIN INSERT INTO v1base_bins (bucket, entity, scorer_id, source, bin, count) SELECT substr(OLD.created_at, 1, 13), COALESCE(OLD.entity, ''), COALESCE(OLD.scorer_id, ''), COALESCE(OLD.source, ''), max(0, min(99, CAST(OLD.score * 100 + 1e-09 AS INTEGER))), -1 WHERE OLD.score IS NOT NULL ON CONFLICT (bucket, entity, scorer_id, source, bin) DO UPDATE SET count = v1base_bins.count + excluded.count; DELETE FROM v1base_bins WHERE bucket = substr(OLD.created_at, 1, 13) AND entity = COALESCE(OLD.entity, '') AND scorer_id = COALESCE(OLD.scorer_id, '') AND source = COALESCE(OLD.source, '') AND bin = max(0, min(99, CAST(OLD.score * 100 + 1e-09 AS INTEGER))) AND count = 0; END;
CREATE TRIGGER v1base_bins_update AFTER UPDATE ON v1base_scores BEGIN INSERT INTO v1base_bins (bucket, entity, scorer_id, source, bin, count) SELECT substr(OLD.created_at, 1, 13), COALESCE(OLD.entity, ''), COALESCE(OLD.scorer_id, ''), COALESCE(OLD.source, ''), max(0, min(99, CAST(OLD.score * 100 + 1e-09 AS INTEGER))), -1 WHERE OLD.score IS NOT NULL ON CONFLICT (bucket, entity, scorer_id, source, bin) DO UPDATE SET count = v1base_bins.count + excluded.count; DELETE FROM v1base_bins WHERE bucket = substr(OLD.created_at, 1, 13) AND entity = COALESCE(OLD.entity, '') AND scorer_id = COALESCE(OLD.scorer_id, '') AND source = COALESCE(OLD.source, '') AND bin = max(0, min(99, CAST(OLD.score * 100 + 1e-09 AS INTEGER))) AND count = 0; INSERT INTO v1base_bins (bucket, entity, scorer_id, source, bin, count) SELECT substr(NEW.created_at, 1, 13), COALESCE(NEW.entity, ''), COALESCE(NEW.scorer_id, ''), COALESCE(NEW.source, ''), max(0, min(99, CAST(NEW.score * 100 + 1e-09 AS INTEGER))), 1 WHERE NEW.score IS NOT NULL ON CONFLICT (bucket, entity, scorer_id, source, bin) DO UPDATE SET count = v1base_bins.count + excluded.count; END;
COMMIT;
