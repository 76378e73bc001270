"""The store's tables as forward migrations: every version's statements, in order.

Never edit a released entry; append a new one (in runners.store.migrations_v10_on, which holds
versions 10 onwards), and write its change into runners.store.current_schema (the schema they
end at, as DDL; a test checks the two agree). runners.store.schema applies them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import duckdb

from runners.store.migrations_v10_on import _V10, _V11, _V12, _V13, _V14

Connection = duckdb.DuckDBPyConnection
Migration = tuple[int, Sequence[str] | Callable[[Connection], None]]

_V1 = [
    "CREATE TABLE schema_version (version INTEGER NOT NULL)",
    """CREATE TABLE runs (
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
        calibration_id VARCHAR
    )""",
    """CREATE TABLE points (
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
        finished_at TIMESTAMP
    )""",
    """CREATE TABLE samples (
        point_id VARCHAR NOT NULL,
        run_id VARCHAR NOT NULL,
        iteration INTEGER NOT NULL,
        seconds DOUBLE NOT NULL,
        pass INTEGER
    )""",
]

_V2 = [
    """CREATE TABLE calibrations (
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
        details JSON
    )""",
    """CREATE TABLE predictions (
        point_id VARCHAR NOT NULL,
        run_id VARCHAR NOT NULL,
        calibration_id VARCHAR NOT NULL,
        model VARCHAR NOT NULL,
        predicted_s DOUBLE,
        latency_s DOUBLE,
        bandwidth_s DOUBLE,
        reduction_s DOUBLE,
        PRIMARY KEY (point_id, calibration_id)
    )""",
    """CREATE TABLE assumptions (
        run_id VARCHAR NOT NULL,
        point_id VARCHAR,
        name VARCHAR NOT NULL,
        state VARCHAR NOT NULL,
        detail VARCHAR
    )""",
    """CREATE TABLE crossovers (
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
        detail VARCHAR
    )""",
]

_V3 = [
    "ALTER TABLE crossovers ADD COLUMN calibration_id VARCHAR",
    "ALTER TABLE assumptions ADD COLUMN calibration_id VARCHAR",
    """CREATE TABLE best_choices (
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
        same_model BOOLEAN
    )""",
    """CREATE TABLE agreement (
        run_id VARCHAR NOT NULL,
        calibration_id VARCHAR NOT NULL,
        scope VARCHAR NOT NULL,
        ranks INTEGER,
        dtype VARCHAR,
        op VARCHAR,
        points INTEGER,
        model_pick_share DOUBLE,
        mean_slowdown DOUBLE,
        same_model_share DOUBLE
    )""",
]

# Launches as the unit of repetition: each sample's launch, and per point how many launches it
# has and the interval of its median launch (runners.domain.sweep.repetition). A store written
# before had one launch per point, so its intervals are its within-launch CIs.
_V4 = [
    "ALTER TABLE samples ADD COLUMN launch INTEGER",
    "UPDATE samples SET launch = 0",
    "ALTER TABLE points ADD COLUMN launches INTEGER",
    "ALTER TABLE points ADD COLUMN interval_low_s DOUBLE",
    "ALTER TABLE points ADD COLUMN interval_high_s DOUBLE",
    "ALTER TABLE points ADD COLUMN interval_rel_halfwidth DOUBLE",
    "ALTER TABLE points ADD COLUMN job VARCHAR",
    """UPDATE points SET launches = CASE WHEN median_s IS NULL THEN 0 ELSE 1 END,
           interval_low_s = ci_low_s, interval_high_s = ci_high_s,
           interval_rel_halfwidth = ci_rel_halfwidth""",
    """CREATE TABLE probes (
        run_id VARCHAR NOT NULL,
        job VARCHAR NOT NULL,
        ranks INTEGER,
        launch INTEGER NOT NULL,
        moment VARCHAR NOT NULL,
        pingpong_s DOUBLE,
        copy_gbps DOUBLE,
        measured_at TIMESTAMP
    )""",
    """CREATE TABLE winners (
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
        candidates INTEGER
    )""",
]

# Schedule-exact predictions (runners.domain.model.pricing): each implementation family's per-call
# and per-round costs on the calibration, which variant a prediction is, its software term, the
# closed-form (textbook) time beside it, and how well each variant predicts a run. Rows written
# before were all closed-form.
_V5 = [
    "ALTER TABLE calibrations ADD COLUMN overheads JSON",
    "ALTER TABLE predictions ADD COLUMN variant VARCHAR",
    "ALTER TABLE predictions ADD COLUMN textbook_s DOUBLE",
    "ALTER TABLE predictions ADD COLUMN software_s DOUBLE",
    "ALTER TABLE agreement ADD COLUMN median_slowdown DOUBLE",
    "UPDATE predictions SET variant = 'textbook', textbook_s = predicted_s",
    """CREATE TABLE model_accuracy (
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
        crossover_inside_share DOUBLE
    )""",
]

# Every library algorithm against the library's default (forced ones, and mpi:tuned following a
# tuning file) from paired (launch, pass) medians: the rule computed once, for every reader.
_V6 = [
    """CREATE TABLE against_default (
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
        pairing VARCHAR
    )""",
]

# Two MPI libraries in one run: each point's library (its algorithm's, catalog.library_of), each
# library's provenance per run, and the default a library algorithm is compared with (Open MPI's
# forced algorithms with Open MPI's default; Open MPI's default with MPICH's). Rows before were
# MPICH's, against MPICH's `mpi`. And where each launch's ranks ran (their own host names).
_V7 = [
    "ALTER TABLE points ADD COLUMN library VARCHAR",
    "UPDATE points SET library = 'mpich'",
    "ALTER TABLE runs ADD COLUMN libraries JSON",
    """UPDATE runs SET libraries = json_object('mpich', json_object('mpi_library', mpi_library,
           'mpi_version', mpi_version)) WHERE mpi_library IS NOT NULL""",
    "ALTER TABLE against_default ADD COLUMN baseline VARCHAR",
    "UPDATE against_default SET baseline = 'mpi'",
    "ALTER TABLE probes ADD COLUMN nodes INTEGER",
    "ALTER TABLE probes ADD COLUMN ranks_per_node INTEGER",
    "ALTER TABLE probes ADD COLUMN hosts VARCHAR",
    "ALTER TABLE winners ADD COLUMN library VARCHAR",
    "UPDATE winners SET library = 'all'",
]

# Schema 8: winners decided on a machine that was busy or changed state are provisional: the
# rule is computed once by the analysis and stored with every winners row (older rows: not).
_V8 = [
    "ALTER TABLE winners ADD COLUMN provisional BOOLEAN",
    "ALTER TABLE winners ADD COLUMN provisional_reason VARCHAR",
    "UPDATE winners SET provisional = false, provisional_reason = ''",
]

# Schema 9: the collective is a dimension (issue 30). Every table keyed by a point or a group of
# points says which collective; rows before were allreduce's.
COLLECTIVE_TABLES = (
    "points", "winners", "crossovers", "best_choices", "agreement", "against_default",
    "model_accuracy",
)  # fmt: skip
# The column's default fills the older rows and any row written without the column.
_V9 = [
    f"ALTER TABLE {table} ADD COLUMN collective VARCHAR DEFAULT 'allreduce'"
    for table in COLLECTIVE_TABLES
]

# Ordered forward migrations: (version reached, SQL statements or a function of the connection).
# Never edit a released entry; append a new one and bump nothing else.
MIGRATIONS: list[Migration] = [
    (1, _V1), (2, _V2), (3, _V3), (4, _V4), (5, _V5), (6, _V6), (7, _V7), (8, _V8), (9, _V9),
    (10, _V10), (11, _V11), (12, _V12), (13, _V13), (14, _V14),
]  # fmt: skip
SCHEMA_VERSION = MIGRATIONS[-1][0]
