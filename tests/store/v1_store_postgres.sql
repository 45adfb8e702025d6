CREATE TABLE IF NOT EXISTS v1base_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS v1base_scores (
  id TEXT PRIMARY KEY,
  created_at TIMESTAMPTZ NOT NULL,
  run_id TEXT,
  scorer_id TEXT,
  scorer_name TEXT,
  scorer_version TEXT,
  outcome TEXT,
  skip_reason TEXT,
  score DOUBLE PRECISION,
  raw_score DOUBLE PRECISION,
  reason TEXT,
  entity TEXT,
  source TEXT,
  eval_id TEXT,
  preprocess_step_result JSONB,
  analyze_step_result JSONB,
  generate_score_step_result JSONB,
  preprocess_prompt TEXT,
  analyze_prompt TEXT,
  generate_score_prompt TEXT,
  generate_reason_prompt TEXT,
  judge_replies JSONB,
  judge_model TEXT,
  prompt_tokens INTEGER,
  completion_tokens INTEGER,
  cost_usd DOUBLE PRECISION,
  duration_ms DOUBLE PRECISION,
  error_type TEXT,
  error_message TEXT,
  failed_step TEXT,
  metadata JSONB
);
CREATE INDEX IF NOT EXISTS v1base_scores_scorer_created_idx ON v1base_scores (scorer_id, created_at);
CREATE INDEX IF NOT EXISTS v1base_scores_run_idx ON v1base_scores (run_id);
CREATE INDEX IF NOT EXISTS v1base_scores_entity_created_idx ON v1base_scores (entity, created_at);
CREATE INDEX IF NOT EXISTS v1base_scores_eval_idx ON v1base_scores (eval_id);
CREATE TABLE IF NOT EXISTS v1base_runs (
  run_id TEXT PRIMARY KEY,
  created_at TIMESTAMPTZ NOT NULL,
  trace_id TEXT,
  parent_id TEXT,
  thread_id TEXT,
  entity TEXT,
  source TEXT,
  eval_id TEXT,
  models JSONB,
  input JSONB,
  output JSONB,
  ground_truth JSONB,
  request_context JSONB,
  context JSONB,
  started_at TIMESTAMPTZ,
  duration_ms DOUBLE PRECISION,
  input_tokens INTEGER,
  output_tokens INTEGER,
  cost_usd DOUBLE PRECISION,
  error TEXT,
  metadata JSONB
);
CREATE INDEX IF NOT EXISTS v1base_runs_entity_created_idx ON v1base_runs (entity, created_at);
CREATE TABLE IF NOT EXISTS v1base_scorers (scorer_id TEXT NOT NULL, scorer_version TEXT NOT NULL, source TEXT NOT NULL, eval_id TEXT NOT NULL, step TEXT NOT NULL, scorer_name TEXT, threshold_min DOUBLE PRECISION, threshold_max DOUBLE PRECISION, updated_at TIMESTAMPTZ NOT NULL, PRIMARY KEY (scorer_id, scorer_version, source, eval_id, step));
CREATE TABLE IF NOT EXISTS v1base_drops (bucket TEXT NOT NULL, entity TEXT NOT NULL, scorer_id TEXT NOT NULL, reason TEXT NOT NULL, count BIGINT NOT NULL, PRIMARY KEY (bucket, entity, scorer_id, reason));
CREATE TABLE IF NOT EXISTS v1base_rollup (bucket TEXT NOT NULL, entity TEXT NOT NULL, scorer_id TEXT NOT NULL, source TEXT NOT NULL, outcome TEXT NOT NULL, skip_reason TEXT NOT NULL, error_type TEXT NOT NULL, rows BIGINT NOT NULL, scores BIGINT NOT NULL, total DOUBLE PRECISION NOT NULL, squares DOUBLE PRECISION NOT NULL, low DOUBLE PRECISION, high DOUBLE PRECISION, priced BIGINT NOT NULL, cost DOUBLE PRECISION NOT NULL, tokens BIGINT NOT NULL, PRIMARY KEY (bucket, entity, scorer_id, source, outcome, skip_reason, error_type));
DELETE FROM v1base_rollup;
INSERT INTO v1base_rollup (bucket, entity, scorer_id, source, outcome, skip_reason, error_type, rows, scores, total, squares, low, high, priced, cost, tokens) SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24'), COALESCE(entity, ''), COALESCE(scorer_id, ''), COALESCE(source, ''), COALESCE(outcome, ''), COALESCE(skip_reason, ''), COALESCE(error_type, ''), COUNT(*), COUNT(score), COALESCE(SUM(score), 0), COALESCE(SUM(score * score), 0), MIN(score), MAX(score), COUNT(cost_usd), COALESCE(SUM(cost_usd), 0), (COALESCE(SUM(prompt_tokens), 0) + COALESCE(SUM(completion_tokens), 0)) FROM v1base_scores GROUP BY 1, 2, 3, 4, 5, 6, 7 ORDER BY 1, 2, 3, 4, 5, 6, 7;
CREATE OR REPLACE FUNCTION v1base_rollup_insert() RETURNS trigger LANGUAGE plpgsql AS $agentevals$ BEGIN INSERT INTO v1base_rollup (bucket, entity, scorer_id, source, outcome, skip_reason, error_type, rows, scores, total, squares, low, high, priced, cost, tokens) SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24'), COALESCE(entity, ''), COALESCE(scorer_id, ''), COALESCE(source, ''), COALESCE(outcome, ''), COALESCE(skip_reason, ''), COALESCE(error_type, ''), COUNT(*), COUNT(score), COALESCE(SUM(score), 0), COALESCE(SUM(score * score), 0), MIN(score), MAX(score), COUNT(cost_usd), COALESCE(SUM(cost_usd), 0), (COALESCE(SUM(prompt_tokens), 0) + COALESCE(SUM(completion_tokens), 0)) FROM agentevals_new GROUP BY 1, 2, 3, 4, 5, 6, 7 ORDER BY 1, 2, 3, 4, 5, 6, 7 ON CONFLICT (bucket, entity, scorer_id, source, outcome, skip_reason, error_type) DO UPDATE SET rows = v1base_rollup.rows + excluded.rows, scores = v1base_rollup.scores + excluded.scores, total = v1base_rollup.total + excluded.total, squares = v1base_rollup.squares + excluded.squares, priced = v1base_rollup.priced + excluded.priced, cost = v1base_rollup.cost + excluded.cost, tokens = v1base_rollup.tokens + excluded.tokens, low = LEAST(v1base_rollup.low, excluded.low), high = GREATEST(v1base_rollup.high, excluded.high); RETURN NULL; END $agentevals$;
DROP TRIGGER IF EXISTS v1base_rollup_insert ON v1base_scores;
CREATE TRIGGER v1base_rollup_insert AFTER INSERT ON v1base_scores REFERENCING NEW TABLE AS agentevals_new FOR EACH STATEMENT EXECUTE FUNCTION v1base_rollup_insert();
CREATE OR REPLACE FUNCTION v1base_rollup_delete() RETURNS trigger LANGUAGE plpgsql AS $agentevals$ BEGIN INSERT INTO v1base_rollup (bucket, entity, scorer_id, source, outcome, skip_reason, error_type, rows, scores, total, squares, low, high, priced, cost, tokens) SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24'), COALESCE(entity, ''), COALESCE(scorer_id, ''), COALESCE(source, ''), COALESCE(outcome, ''), COALESCE(skip_reason, ''), COALESCE(error_type, ''), -COUNT(*), -COUNT(score), -COALESCE(SUM(score), 0), -COALESCE(SUM(score * score), 0), NULL, NULL, -COUNT(cost_usd), -COALESCE(SUM(cost_usd), 0), -(COALESCE(SUM(prompt_tokens), 0) + COALESCE(SUM(completion_tokens), 0)) FROM agentevals_old GROUP BY 1, 2, 3, 4, 5, 6, 7 ORDER BY 1, 2, 3, 4, 5, 6, 7 ON CONFLICT (bucket, entity, scorer_id, source, outcome, skip_reason, error_type) DO UPDATE SET rows = v1base_rollup.rows + excluded.rows, scores = v1base_rollup.scores + excluded.scores, total = v1base_rollup.total + excluded.total, squares = v1base_rollup.squares + excluded.squares, priced = v1base_rollup.priced + excluded.priced, cost = v1base_rollup.cost + excluded.cost, tokens = v1base_rollup.tokens + excluded.tokens, low = LEAST(v1base_rollup.low, excluded.low), high = GREATEST(v1base_rollup.high, excluded.high); UPDATE v1base_rollup SET low = (SELECT MIN(s.score) FROM v1base_scores s WHERE s.scorer_id = o.k2 AND s.created_at >= ((o.k0) || ':00:00+00')::timestamptz AND s.created_at < ((o.k0) || ':00:00+00')::timestamptz + interval '1 hour' AND COALESCE(s.entity, '') = o.k1 AND COALESCE(s.source, '') = o.k3 AND COALESCE(s.outcome, '') = o.k4 AND COALESCE(s.skip_reason, '') = o.k5 AND COALESCE(s.error_type, '') = o.k6), high = (SELECT MAX(s.score) FROM v1base_scores s WHERE s.scorer_id = o.k2 AND s.created_at >= ((o.k0) || ':00:00+00')::timestamptz AND s.created_at < ((o.k0) || ':00:00+00')::timestamptz + interval '1 hour' AND COALESCE(s.entity, '') = o.k1 AND COALESCE(s.source, '') = o.k3 AND COALESCE(s.outcome, '') = o.k4 AND COALESCE(s.skip_reason, '') = o.k5 AND COALESCE(s.error_type, '') = o.k6) FROM (SELECT DISTINCT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24') AS k0, COALESCE(entity, '') AS k1, COALESCE(scorer_id, '') AS k2, COALESCE(source, '') AS k3, COALESCE(outcome, '') AS k4, COALESCE(skip_reason, '') AS k5, COALESCE(error_type, '') AS k6 FROM agentevals_old) o WHERE v1base_rollup.bucket = o.k0 AND v1base_rollup.entity = o.k1 AND v1base_rollup.scorer_id = o.k2 AND v1base_rollup.source = o.k3 AND v1base_rollup.outcome = o.k4 AND v1base_rollup.skip_reason = o.k5 AND v1base_rollup.error_type = o.k6; DELETE FROM v1base_rollup WHERE rows = 0; RETURN NULL; END $agentevals$;
DROP TRIGGER IF EXISTS v1base_rollup_delete ON v1base_scores;
CREATE TRIGGER v1base_rollup_delete AFTER DELETE ON v1base_scores REFERENCING OLD TABLE AS agentevals_old FOR EACH STATEMENT EXECUTE FUNCTION v1base_rollup_delete();
CREATE OR REPLACE FUNCTION v1base_rollup_update() RETURNS trigger LANGUAGE plpgsql AS $agentevals$ BEGIN INSERT INTO v1base_rollup (bucket, entity, scorer_id, source, outcome, skip_reason, error_type, rows, scores, total, squares, low, high, priced, cost, tokens) SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24'), COALESCE(entity, ''), COALESCE(scorer_id, ''), COALESCE(source, ''), COALESCE(outcome, ''), COALESCE(skip_reason, ''), COALESCE(error_type, ''), -COUNT(*), -COUNT(score), -COALESCE(SUM(score), 0), -COALESCE(SUM(score * score), 0), NULL, NULL, -COUNT(cost_usd), -COALESCE(SUM(cost_usd), 0), -(COALESCE(SUM(prompt_tokens), 0) + COALESCE(SUM(completion_tokens), 0)) FROM agentevals_old GROUP BY 1, 2, 3, 4, 5, 6, 7 ORDER BY 1, 2, 3, 4, 5, 6, 7 ON CONFLICT (bucket, entity, scorer_id, source, outcome, skip_reason, error_type) DO UPDATE SET rows = v1base_rollup.rows + excluded.rows, scores = v1base_rollup.scores + excluded.scores, total = v1base_rollup.total + excluded.total, squares = v1base_rollup.squares + excluded.squares, priced = v1base_rollup.priced + excluded.priced, cost = v1base_rollup.cost + excluded.cost, tokens = v1base_rollup.tokens + excluded.tokens, low = LEAST(v1base_rollup.low, excluded.low), high = GREATEST(v1base_rollup.high, excluded.high); UPDATE v1base_rollup SET low = (SELECT MIN(s.score) FROM v1base_scores s WHERE s.scorer_id = o.k2 AND s.created_at >= ((o.k0) || ':00:00+00')::timestamptz AND s.created_at < ((o.k0) || ':00:00+00')::timestamptz + interval '1 hour' AND COALESCE(s.entity, '') = o.k1 AND COALESCE(s.source, '') = o.k3 AND COALESCE(s.outcome, '') = o.k4 AND COALESCE(s.skip_reason, '') = o.k5 AND COALESCE(s.error_type, '') = o.k6), high = (SELECT MAX(s.score) FROM v1base_scores s WHERE s.scorer_id = o.k2 AND s.created_at >= ((o.k0) || ':00:00+00')::timestamptz AND s.created_at < ((o.k0) || ':00:00+00')::timestamptz + interval '1 hour' AND COALESCE(s.entity, '') = o.k1 AND COALESCE(s.source, '') = o.k3 AND COALESCE(s.outcome, '') = o.k4 AND COALESCE(s.skip_reason, '') = o.k5 AND COALESCE(s.error_type, '') = o.k6) FROM (SELECT DISTINCT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24') AS k0, COALESCE(entity, '') AS k1, COALESCE(scorer_id, '') AS k2, COALESCE(source, '') AS k3, COALESCE(outcome, '') AS k4, COALESCE(skip_reason, '') AS k5, COALESCE(error_type, '') AS k6 FROM agentevals_old) o WHERE v1base_rollup.bucket = o.k0 AND v1base_rollup.entity = o.k1 AND v1base_rollup.scorer_id = o.k2 AND v1base_rollup.source = o.k3 AND v1base_rollup.outcome = o.k4 AND v1base_rollup.skip_reason = o.k5 AND v1base_rollup.error_type = o.k6; DELETE FROM v1base_rollup WHERE rows = 0; INSERT INTO v1base_rollup (bucket, entity, scorer_id, source, outcome, skip_reason, error_type, rows, scores, total, squares, low, high, priced, cost, tokens) SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24'), COALESCE(entity, ''), COALESCE(scorer_id, ''), COALESCE(source, ''), COALESCE(outcome, ''), COALESCE(skip_reason, ''), COALESCE(error_type, ''), COUNT(*), COUNT(score), COALESCE(SUM(score), 0), COALESCE(SUM(score * score), 0), MIN(score), MAX(score), COUNT(cost_usd), COALESCE(SUM(cost_usd), 0), (COALESCE(SUM(prompt_tokens), 0) + COALESCE(SUM(completion_tokens), 0)) FROM agentevals_new GROUP BY 1, 2, 3, 4, 5, 6, 7 ORDER BY 1, 2, 3, 4, 5, 6, 7 ON CONFLICT (bucket, entity, scorer_id, source, outcome, skip_reason, error_type) DO UPDATE SET rows = v1base_rollup.rows + excluded.rows, scores = v1base_rollup.scores + excluded.scores, total = v1base_rollup.total + excluded.total, squares = v1base_rollup.squares + excluded.squares, priced = v1base_rollup.priced + excluded.priced, cost = v1base_rollup.cost + excluded.cost, tokens = v1base_rollup.tokens + excluded.tokens, low = LEAST(v1base_rollup.low, excluded.low), high = GREATEST(v1base_rollup.high, excluded.high); RETURN NULL; END $agentevals$;
DROP TRIGGER IF EXISTS v1base_rollup_update ON v1base_scores;
CREATE TRIGGER v1base_rollup_update AFTER UPDATE ON v1base_scores REFERENCING OLD TABLE AS agentevals_old NEW TABLE AS agentevals_new FOR EACH STATEMENT EXECUTE FUNCTION v1base_rollup_update();
CREATE TABLE IF NOT EXISTS v1base_bins (bucket TEXT NOT NULL, entity TEXT NOT NULL, scorer_id TEXT NOT NULL, source TEXT NOT NULL, bin INTEGER NOT NULL, count BIGINT NOT NULL, PRIMARY KEY (bucket, entity, scorer_id, source, bin));
DELETE FROM v1base_bins;
INSERT INTO v1base_bins (bucket, entity, scorer_id, source, bin, count) SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24'), COALESCE(entity, ''), COALESCE(scorer_id, ''), COALESCE(source, ''), GREATEST(0, LEAST(99, floor(score * 100 + 1e-09)::integer)), COUNT(*) FROM v1base_scores WHERE score IS NOT NULL GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5;
CREATE OR REPLACE FUNCTION v1base_bins_insert() RETURNS trigger LANGUAGE plpgsql AS $agentevals$ BEGIN INSERT INTO v1base_bins (bucket, entity, scorer_id, source, bin, count) SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24'), COALESCE(entity, ''), COALESCE(scorer_id, ''), COALESCE(source, ''), GREATEST(0, LEAST(99, floor(score * 100 + 1e-09)::integer)), COUNT(*) FROM agentevals_new WHERE score IS NOT NULL GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5 ON CONFLICT (bucket, entity, scorer_id, source, bin) DO UPDATE SET count = v1base_bins.count + excluded.count; RETURN NULL; END $agentevals$;
DROP TRIGGER IF EXISTS v1base_bins_insert ON v1base_scores;
CREATE TRIGGER v1base_bins_insert AFTER INSERT ON v1base_scores REFERENCING NEW TABLE AS agentevals_new FOR EACH STATEMENT EXECUTE FUNCTION v1base_bins_insert();
CREATE OR REPLACE FUNCTION v1base_bins_delete() RETURNS trigger LANGUAGE plpgsql AS $agentevals$ BEGIN INSERT INTO v1base_bins (bucket, entity, scorer_id, source, bin, count) SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24'), COALESCE(entity, ''), COALESCE(scorer_id, ''), COALESCE(source, ''), GREATEST(0, LEAST(99, floor(score * 100 + 1e-09)::integer)), -COUNT(*) FROM agentevals_old WHERE score IS NOT NULL GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5 ON CONFLICT (bucket, entity, scorer_id, source, bin) DO UPDATE SET count = v1base_bins.count + excluded.count; DELETE FROM v1base_bins USING (SELECT DISTINCT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24') AS k0, COALESCE(entity, '') AS k1, COALESCE(scorer_id, '') AS k2, COALESCE(source, '') AS k3, GREATEST(0, LEAST(99, floor(score * 100 + 1e-09)::integer)) AS k4 FROM agentevals_old WHERE score IS NOT NULL) o WHERE v1base_bins.bucket = o.k0 AND v1base_bins.entity = o.k1 AND v1base_bins.scorer_id = o.k2 AND v1base_bins.source = o.k3 AND v1base_bins.bin = o.k4 AND v1base_bins.count = 0; RETURN NULL; END $agentevals$;
DROP TRIGGER IF EXISTS v1base_bins_delete ON v1base_scores;
CREATE TRIGGER v1base_bins_delete AFTER DELETE ON v1base_scores REFERENCING OLD TABLE AS agentevals_old FOR EACH STATEMENT EXECUTE FUNCTION v1base_bins_delete();
CREATE OR REPLACE FUNCTION v1base_bins_update() RETURNS trigger LANGUAGE plpgsql AS $agentevals$ BEGIN INSERT INTO v1base_bins (bucket, entity, scorer_id, source, bin, count) SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24'), COALESCE(entity, ''), COALESCE(scorer_id, ''), COALESCE(source, ''), GREATEST(0, LEAST(99, floor(score * 100 + 1e-09)::integer)), -COUNT(*) FROM agentevals_old WHERE score IS NOT NULL GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5 ON CONFLICT (bucket, entity, scorer_id, source, bin) DO UPDATE SET count = v1base_bins.count + excluded.count; DELETE FROM v1base_bins USING (SELECT DISTINCT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24') AS k0, COALESCE(entity, '') AS k1, COALESCE(scorer_id, '') AS k2, COALESCE(source, '') AS k3, GREATEST(0, LEAST(99, floor(score * 100 + 1e-09)::integer)) AS k4 FROM agentevals_old WHERE score IS NOT NULL) o WHERE v1base_bins.bucket = o.k0 AND v1base_bins.entity = o.k1 AND v1base_bins.scorer_id = o.k2 AND v1base_bins.source = o.k3 AND v1base_bins.bin = o.k4 AND v1base_bins.count = 0; INSERT INTO v1base_bins (bucket, entity, scorer_id, source, bin, count) SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24'), COALESCE(entity, ''), COALESCE(scorer_id, ''), COALESCE(source, ''), GREATEST(0, LEAST(99, floor(score * 100 + 1e-09)::integer)), COUNT(*) FROM agentevals_new WHERE score IS NOT NULL GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5 ON CONFLICT (bucket, entity, scorer_id, source, bin) DO UPDATE SET count = v1base_bins.count + excluded.count; RETURN NULL; END $agentevals$;
DROP TRIGGER IF EXISTS v1base_bins_update ON v1base_scores;
CREATE TRIGGER v1base_bins_update AFTER UPDATE ON v1base_scores REFERENCING OLD TABLE AS agentevals_old NEW TABLE AS agentevals_new FOR EACH STATEMENT EXECUTE FUNCTION v1base_bins_update();
INSERT INTO v1base_meta (key, value) VALUES ('schema_version', '1') ON CONFLICT DO NOTHING;
