"""The store's current schema as DDL: every table as the migrations leave it, in one place.

runners.store.migrations is the history (never edited, only appended to); this is where it ends,
to read at a glance. tests/store/test_current_schema.py checks that a store created by running the
migrations has exactly these tables, columns, types, nullability, defaults and primary keys, so
a new migration comes with its change written here too, and in docs/schema.md, which says what
each column means (the same test checks that it names exactly these tables and columns).
"""

from __future__ import annotations

CURRENT_SCHEMA_VERSION = 14  # the version the migrations reach (runners.store.SCHEMA_VERSION)

CURRENT_SCHEMA = """
CREATE TABLE schema_version (
    version INTEGER NOT NULL
);

CREATE TABLE runs (
    run_id VARCHAR PRIMARY KEY,
    status VARCHAR NOT NULL,
    status_reason VARCHAR,
    started_at TIMESTAMP,
    finished_at TIMESTAMP,
    spec_toml VARCHAR,
    command_line VARCHAR,
    host VARCHAR,
    cpu_model VARCHAR,
    physical_cores INTEGER,
    mpi_library VARCHAR,
    mpi_version VARCHAR,
    mpi4py_version VARCHAR,
    numpy_version VARCHAR,
    python_version VARCHAR,
    code_version VARCHAR,
    environment JSON,
    thread_level VARCHAR,
    memory_setting VARCHAR,
    calibration_id VARCHAR,
    libraries JSON,
    name VARCHAR,
    tags JSON,
    interval_history JSON,
    adaptive JSON
);

CREATE TABLE points (
    point_id VARCHAR PRIMARY KEY,
    run_id VARCHAR NOT NULL,
    algorithm VARCHAR NOT NULL,
    library_config VARCHAR,
    ranks INTEGER NOT NULL,
    bytes BIGINT NOT NULL,
    dtype VARCHAR NOT NULL,
    op VARCHAR NOT NULL,
    count BIGINT,
    status VARCHAR NOT NULL,
    reason VARCHAR,
    oversubscribed BOOLEAN,
    iterations INTEGER,
    warmup INTEGER,
    median_s DOUBLE,
    mean_s DOUBLE,
    min_s DOUBLE,
    max_s DOUBLE,
    p5_s DOUBLE,
    p95_s DOUBLE,
    stddev_s DOUBLE,
    ci_low_s DOUBLE,
    ci_high_s DOUBLE,
    ci_rel_halfwidth DOUBLE,
    ci_target_met BOOLEAN,
    algbw_gbps DOUBLE,
    busbw_gbps DOUBLE,
    sync_cadence VARCHAR,
    cache_mode VARCHAR,
    verified BOOLEAN,
    started_at TIMESTAMP,
    finished_at TIMESTAMP,
    launches INTEGER,
    interval_low_s DOUBLE,
    interval_high_s DOUBLE,
    interval_rel_halfwidth DOUBLE,
    job VARCHAR,
    library VARCHAR,
    collective VARCHAR DEFAULT 'allreduce',
    launch_low_s DOUBLE,
    launch_high_s DOUBLE,
    ranks_per_node INTEGER
);

CREATE TABLE samples (
    point_id VARCHAR NOT NULL,
    run_id VARCHAR NOT NULL,
    iteration INTEGER NOT NULL,
    seconds DOUBLE NOT NULL,
    pass INTEGER,
    launch INTEGER
);

CREATE TABLE calibrations (
    calibration_id VARCHAR PRIMARY KEY,
    created_at TIMESTAMP NOT NULL,
    host VARCHAR,
    mpi_library VARCHAR,
    ranks INTEGER,
    alpha_s DOUBLE,
    beta_s_per_byte DOUBLE,
    r_squared DOUBLE,
    min_bytes BIGINT,
    max_bytes BIGINT,
    breakpoints JSON,
    segments JSON,
    gammas JSON,
    source VARCHAR,
    details JSON,
    overheads JSON
);

CREATE TABLE predictions (
    point_id VARCHAR NOT NULL,
    run_id VARCHAR NOT NULL,
    calibration_id VARCHAR NOT NULL,
    model VARCHAR NOT NULL,
    predicted_s DOUBLE,
    latency_s DOUBLE,
    bandwidth_s DOUBLE,
    reduction_s DOUBLE,
    variant VARCHAR,
    textbook_s DOUBLE,
    software_s DOUBLE,
    PRIMARY KEY (point_id, calibration_id)
);

CREATE TABLE assumptions (
    run_id VARCHAR NOT NULL,
    point_id VARCHAR,
    name VARCHAR NOT NULL,
    state VARCHAR NOT NULL,
    detail VARCHAR,
    calibration_id VARCHAR
);

CREATE TABLE crossovers (
    run_id VARCHAR NOT NULL,
    ranks INTEGER NOT NULL,
    dtype VARCHAR NOT NULL,
    op VARCHAR NOT NULL,
    algorithm_a VARCHAR NOT NULL,
    algorithm_b VARCHAR NOT NULL,
    kind VARCHAR NOT NULL,
    bytes DOUBLE NOT NULL,
    low_bytes DOUBLE,
    high_bytes DOUBLE,
    detail VARCHAR,
    calibration_id VARCHAR,
    collective VARCHAR DEFAULT 'allreduce',
    ranks_per_node INTEGER DEFAULT 0
);

CREATE TABLE best_choices (
    run_id VARCHAR NOT NULL,
    calibration_id VARCHAR NOT NULL,
    ranks INTEGER NOT NULL,
    bytes BIGINT NOT NULL,
    dtype VARCHAR NOT NULL,
    op VARCHAR NOT NULL,
    measured_best VARCHAR NOT NULL,
    predicted_best VARCHAR NOT NULL,
    best_s DOUBLE,
    pick_s DOUBLE,
    slowdown DOUBLE,
    candidates INTEGER,
    same_model BOOLEAN,
    collective VARCHAR DEFAULT 'allreduce',
    ranks_per_node INTEGER DEFAULT 0
);

CREATE TABLE agreement (
    run_id VARCHAR NOT NULL,
    calibration_id VARCHAR NOT NULL,
    scope VARCHAR NOT NULL,
    ranks INTEGER,
    dtype VARCHAR,
    op VARCHAR,
    points INTEGER,
    model_pick_share DOUBLE,
    mean_slowdown DOUBLE,
    same_model_share DOUBLE,
    median_slowdown DOUBLE,
    collective VARCHAR DEFAULT 'allreduce',
    ranks_per_node INTEGER DEFAULT 0
);

CREATE TABLE probes (
    run_id VARCHAR NOT NULL,
    job VARCHAR NOT NULL,
    ranks INTEGER,
    launch INTEGER NOT NULL,
    moment VARCHAR NOT NULL,
    pingpong_s DOUBLE,
    copy_gbps DOUBLE,
    measured_at TIMESTAMP,
    nodes INTEGER,
    ranks_per_node INTEGER,
    hosts VARCHAR,
    node_map VARCHAR,
    network_bytes BIGINT
);

CREATE TABLE winners (
    run_id VARCHAR NOT NULL,
    ranks INTEGER NOT NULL,
    dtype VARCHAR NOT NULL,
    op VARCHAR NOT NULL,
    bytes BIGINT NOT NULL,
    winner VARCHAR NOT NULL,
    runner_up VARCHAR NOT NULL,
    decided BOOLEAN NOT NULL,
    ratio DOUBLE,
    ratio_low DOUBLE,
    ratio_high DOUBLE,
    launches INTEGER,
    pairing VARCHAR,
    candidates INTEGER,
    library VARCHAR,
    provisional BOOLEAN,
    provisional_reason VARCHAR,
    collective VARCHAR DEFAULT 'allreduce',
    default_algorithm VARCHAR,
    speedup DOUBLE,
    speedup_low DOUBLE,
    speedup_high DOUBLE,
    speedup_verdict VARCHAR,
    ranks_per_node INTEGER DEFAULT 0
);

CREATE TABLE model_accuracy (
    run_id VARCHAR NOT NULL,
    calibration_id VARCHAR NOT NULL,
    variant VARCHAR NOT NULL,
    placement VARCHAR NOT NULL,
    family VARCHAR NOT NULL,
    points INTEGER,
    median_abs_error DOUBLE,
    p90_abs_error DOUBLE,
    decided_cells INTEGER,
    winner_share DOUBLE,
    measured_crossovers INTEGER,
    crossover_inside_share DOUBLE,
    collective VARCHAR DEFAULT 'allreduce',
    ranks_per_node INTEGER DEFAULT 0
);

CREATE TABLE against_default (
    run_id VARCHAR NOT NULL,
    ranks INTEGER NOT NULL,
    dtype VARCHAR NOT NULL,
    op VARCHAR NOT NULL,
    bytes BIGINT NOT NULL,
    algorithm VARCHAR NOT NULL,
    ratio DOUBLE,
    ratio_low DOUBLE,
    ratio_high DOUBLE,
    verdict VARCHAR NOT NULL,
    launches INTEGER,
    pairing VARCHAR,
    baseline VARCHAR,
    collective VARCHAR DEFAULT 'allreduce',
    ranks_per_node INTEGER DEFAULT 0
);

CREATE TABLE workloads (
    run_id VARCHAR NOT NULL,
    workload VARCHAR NOT NULL,
    body JSON NOT NULL,
    notes JSON,
    reported_at TIMESTAMP
);

CREATE TABLE workload_policies (
    run_id VARCHAR NOT NULL,
    workload VARCHAR NOT NULL,
    policy VARCHAR NOT NULL,
    kind VARCHAR NOT NULL,
    library VARCHAR,
    total_s DOUBLE,
    interval_low_s DOUBLE,
    interval_high_s DOUBLE,
    points_sum_s DOUBLE,
    default_total_s DOUBLE,
    predicted_s DOUBLE,
    covered_calls INTEGER,
    priced_calls INTEGER,
    faster_calls INTEGER,
    slower_calls INTEGER,
    gain_s DOUBLE,
    loss_s DOUBLE,
    gain_share DOUBLE,
    loss_share DOUBLE,
    ratio DOUBLE,
    ratio_low DOUBLE,
    ratio_high DOUBLE,
    verdict VARCHAR
);

CREATE TABLE workload_calls (
    run_id VARCHAR NOT NULL,
    workload VARCHAR NOT NULL,
    policy VARCHAR NOT NULL,
    call_index INTEGER NOT NULL,
    collective VARCHAR NOT NULL,
    bytes BIGINT NOT NULL,
    dtype VARCHAR NOT NULL,
    op VARCHAR NOT NULL,
    ranks INTEGER NOT NULL,
    calls BIGINT NOT NULL,
    algorithm VARCHAR NOT NULL,
    own BOOLEAN,
    median_s DOUBLE,
    time_s DOUBLE,
    default_time_s DOUBLE,
    delta_s DOUBLE,
    share_of_default DOUBLE,
    ratio DOUBLE,
    ratio_low DOUBLE,
    ratio_high DOUBLE,
    verdict VARCHAR
);

CREATE TABLE replays (
    run_id VARCHAR NOT NULL,
    workload VARCHAR NOT NULL,
    replay_id VARCHAR,
    policy VARCHAR NOT NULL,
    ranks INTEGER NOT NULL,
    launch INTEGER NOT NULL,
    repetition INTEGER NOT NULL,
    replayed_s DOUBLE NOT NULL,
    sequenced_s DOUBLE,
    isolated_s DOUBLE,
    library VARCHAR,
    replayed_at TIMESTAMP
);

CREATE TABLE cell_inferences (
    run_id VARCHAR NOT NULL,
    collective VARCHAR NOT NULL,
    ranks INTEGER NOT NULL,
    dtype VARCHAR NOT NULL,
    op VARCHAR NOT NULL,
    bytes BIGINT NOT NULL,
    winner VARCHAR NOT NULL,
    runner_up VARCHAR,
    settled BOOLEAN NOT NULL,
    reason VARCHAR NOT NULL,
    below_bytes BIGINT,
    above_bytes BIGINT,
    ranks_per_node INTEGER DEFAULT 0
);
"""
