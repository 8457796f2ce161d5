-- The run store, version 1: one row per run, its headline figures, scores and settings.
-- Written once for SQLite and PostgreSQL alike (no type either lacks).
CREATE TABLE runs (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    folder TEXT NOT NULL,
    started_unix_ms BIGINT NOT NULL,
    ended_unix_ms BIGINT NOT NULL,
    target TEXT NOT NULL,
    server_kind TEXT NOT NULL,
    server_version TEXT NOT NULL,
    model TEXT NOT NULL,
    weights TEXT NOT NULL,
    gpu TEXT NOT NULL,
    driver TEXT NOT NULL,
    machine TEXT NOT NULL,
    verdict TEXT NOT NULL,
    verdict_reasons TEXT NOT NULL,
    folder_present BIGINT NOT NULL
);
CREATE INDEX runs_model ON runs (model, started_unix_ms);
CREATE INDEX runs_folder ON runs (folder);
CREATE TABLE figures (
    run_id TEXT NOT NULL REFERENCES runs (id),
    position BIGINT NOT NULL,
    name TEXT NOT NULL,
    value DOUBLE PRECISION NOT NULL,
    unit TEXT NOT NULL,
    low DOUBLE PRECISION,
    high DOUBLE PRECISION,
    higher_is_better BIGINT NOT NULL,
    PRIMARY KEY (run_id, position)
);
CREATE INDEX figures_name ON figures (name);
CREATE TABLE scores (
    run_id TEXT NOT NULL REFERENCES runs (id),
    position BIGINT NOT NULL,
    dimension TEXT NOT NULL,
    passed BIGINT NOT NULL,
    scored BIGINT NOT NULL,
    PRIMARY KEY (run_id, position)
);
CREATE TABLE settings (
    run_id TEXT NOT NULL REFERENCES runs (id),
    position BIGINT NOT NULL,
    name TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (run_id, position)
);
