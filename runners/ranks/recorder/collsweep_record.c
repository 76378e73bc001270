/* collsweep's call recorder: MPI profiling-interface wrappers, preloaded into every rank by
 * `collsweep record` (LD_PRELOAD), that note each collective call and change nothing it does.
 * This file is its core (the tables, the record file); wrappers.c holds the wrappers.
 *
 * Each wrapper of a collective collsweep sweeps (MPI_Allreduce, MPI_Bcast, MPI_Reduce,
 * MPI_Allgather, MPI_Reduce_scatter_block, and their MPI-4 large-count `_c` forms, which mpi4py
 * calls where the library has them) files the call under its key in a small hash table (the
 * collective, the communicator's members, the whole vector's bytes as collsweep sizes it, the
 * datatype's and the op's names, the root) and extends the rank's run-length encoded order of
 * calls, capped at COLLSWEEP_RECORD_MAX_ORDER runs; then it calls the PMPI_ routine with the
 * very arguments it got. The other common collectives (Barrier, Alltoall(v), Gather(v),
 * Scatter(v), Allgatherv, Reduce_scatter, Scan, Exscan and the nonblocking ones) are counted
 * only. Nothing is recorded unless COLLSWEEP_RECORD_DIR names a folder: at MPI_Finalize (or at
 * exit, for a program that never calls it) each rank writes rank-<world rank>-<pid>.txt there,
 * under a temporary name renamed into place (runners/domain/recording.py reads it).
 *
 * Built with the MPI library's own mpicc (MPICH's also serves Intel MPI, whose ABI it shares;
 * Open MPI needs its own), by runners/jobs/recorder_build.py.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "recorder.h"

#define DIR_ENV "COLLSWEEP_RECORD_DIR"
#define MAX_ORDER_ENV "COLLSWEEP_RECORD_MAX_ORDER"
#define DEFAULT_MAX_ORDER 1000000
#define NAME_LEN 24

static const char *const RECORDED[N_RECORDED] = {
    "allreduce", "bcast", "reduce", "allgather", "reduce_scatter"};
static const char *const RECORDED_MPI[N_RECORDED] = {
    "MPI_Allreduce", "MPI_Bcast", "MPI_Reduce", "MPI_Allgather", "MPI_Reduce_scatter_block"};

static const char *const COUNTED[N_COUNTED] = {
    "MPI_Barrier", "MPI_Alltoall", "MPI_Alltoallv", "MPI_Allgatherv", "MPI_Gather",
    "MPI_Gatherv", "MPI_Scatter", "MPI_Scatterv", "MPI_Reduce_scatter", "MPI_Scan",
    "MPI_Exscan", "MPI_Iallreduce", "MPI_Ibcast", "MPI_Ireduce", "MPI_Iallgather",
    "MPI_Ireduce_scatter_block", "MPI_Ibarrier", "MPI_Ialltoall"};

typedef struct { int kind, comm, dtype, op, root; long long bytes, calls; } call_t;
typedef struct { int size, rank, inter; int *members; } comm_t; /* members: NULL = world */
typedef struct { MPI_Datatype handle; int name; MPI_Count size; } known_type_t;
typedef struct { MPI_Op handle; int name; } known_op_t;

enum { OFF, ON, DONE }; /* state: OFF until MPI is up and a folder is named */
static int state = OFF, set_up = 0;
static char lock_flag = 0;
static int world_rank = -1, world_size = 0, keyval = MPI_KEYVAL_INVALID;
static MPI_Group world_group;
static comm_t *comms = NULL;
static int n_comms = 0, cap_comms = 0;
static call_t *calls = NULL;
static int n_calls = 0, cap_calls = 0;
static int *slots = NULL; /* open addressing: index + 1 into calls, 0 = empty */
static int n_slots = 0;
static int *order_call = NULL;
static long long *order_times = NULL;
static long long order_len = 0, order_cap = 0, max_order = DEFAULT_MAX_ORDER, dropped = 0;
static int order_cut = 0;
static long long counted[N_COUNTED], inter_calls[N_RECORDED], empty_calls[N_RECORDED];
static char names[64][NAME_LEN]; /* datatype and op names; a call holds an index */
static int n_names = 0;
static known_type_t types[48];
static int n_types = 0, last_type = -1;
static known_op_t ops[16];
static int n_ops = 0, last_op = -1, none_op = -1, user_op = -1;

static void lock(void) {
    while (__atomic_test_and_set(&lock_flag, __ATOMIC_ACQUIRE)) {
    }
}
static void unlock(void) { __atomic_clear(&lock_flag, __ATOMIC_RELEASE); }

static int name_id(const char *name) {
    for (int i = 0; i < n_names; i++)
        if (strcmp(names[i], name) == 0) return i;
    if (n_names == 63) { /* the last slot: every further name */
        snprintf(names[63], NAME_LEN, "other");
        return 63;
    }
    snprintf(names[n_names], NAME_LEN, "%s", name);
    return n_names++;
}

/* A predefined datatype named by what it holds: signed/unsigned integers and floats by their
 * width in this library ("int64", "float32"), others by a fixed short name. */
static void add_type(MPI_Datatype handle, const char *kind) {
    MPI_Count size = 0;
    char name[NAME_LEN];
    if (handle == MPI_DATATYPE_NULL || n_types == 48) return;
    PMPI_Type_size_x(handle, &size);
    if (strcmp(kind, "int") == 0 || strcmp(kind, "uint") == 0 || strcmp(kind, "float") == 0 ||
        strcmp(kind, "complex") == 0)
        snprintf(name, NAME_LEN, "%s%lld", kind, (long long)size * 8);
    else
        snprintf(name, NAME_LEN, "%s", kind);
    types[n_types++] = (known_type_t){handle, name_id(name), size};
}

static void add_op(MPI_Op handle, const char *name) {
    if (n_ops < 16) ops[n_ops++] = (known_op_t){handle, name_id(name)};
}

static void known_names(void) {
    const char *ints[] = {"int", "uint"};
    MPI_Datatype signed_types[] = {MPI_SIGNED_CHAR, MPI_SHORT, MPI_INT, MPI_LONG,
                                   MPI_LONG_LONG_INT, MPI_INT8_T, MPI_INT16_T, MPI_INT32_T,
                                   MPI_INT64_T, MPI_AINT, MPI_OFFSET, MPI_COUNT};
    MPI_Datatype unsigned_types[] = {MPI_UNSIGNED_CHAR, MPI_UNSIGNED_SHORT, MPI_UNSIGNED,
                                     MPI_UNSIGNED_LONG, MPI_UNSIGNED_LONG_LONG, MPI_UINT8_T,
                                     MPI_UINT16_T, MPI_UINT32_T, MPI_UINT64_T};
    add_type(MPI_FLOAT, "float");
    add_type(MPI_DOUBLE, "float");
#ifdef MPIX_C_FLOAT16
    add_type(MPIX_C_FLOAT16, "float");
#endif
#ifdef MPI_C_FLOAT16
    add_type(MPI_C_FLOAT16, "float");
#endif
    for (size_t i = 0; i < sizeof signed_types / sizeof *signed_types; i++)
        add_type(signed_types[i], ints[0]);
    for (size_t i = 0; i < sizeof unsigned_types / sizeof *unsigned_types; i++)
        add_type(unsigned_types[i], ints[1]);
    add_type(MPI_BYTE, "byte");
    add_type(MPI_CHAR, "char");
    add_type(MPI_WCHAR, "wchar");
    add_type(MPI_C_BOOL, "bool");
    add_type(MPI_LONG_DOUBLE, "longdouble");
    add_type(MPI_C_FLOAT_COMPLEX, "complex");
    add_type(MPI_C_DOUBLE_COMPLEX, "complex");
    add_type(MPI_2INT, "2int");
    add_type(MPI_FLOAT_INT, "float_int");
    add_type(MPI_DOUBLE_INT, "double_int");
    add_type(MPI_LONG_INT, "long_int");
    add_op(MPI_SUM, "sum");
    add_op(MPI_PROD, "prod");
    add_op(MPI_MAX, "max");
    add_op(MPI_MIN, "min");
    add_op(MPI_LAND, "land");
    add_op(MPI_BAND, "band");
    add_op(MPI_LOR, "lor");
    add_op(MPI_BOR, "bor");
    add_op(MPI_LXOR, "lxor");
    add_op(MPI_BXOR, "bxor");
    add_op(MPI_MAXLOC, "maxloc");
    add_op(MPI_MINLOC, "minloc");
    add_op(MPI_REPLACE, "replace");
    add_op(MPI_NO_OP, "no_op");
    none_op = name_id("none");
    user_op = name_id("user");
}

/* The datatype's name index and size: a predefined one from the table (the last one found is
 * tried first), any other as "other<size>". */
static int type_of(MPI_Datatype handle, MPI_Count *size) {
    if (last_type >= 0 && types[last_type].handle == handle) {
        *size = types[last_type].size;
        return types[last_type].name;
    }
    for (int i = 0; i < n_types; i++) {
        if (types[i].handle == handle) {
            last_type = i;
            *size = types[i].size;
            return types[i].name;
        }
    }
    char name[NAME_LEN];
    PMPI_Type_size_x(handle, size);
    snprintf(name, NAME_LEN, "other%lld", (long long)*size);
    return name_id(name);
}

static int op_of(MPI_Op handle) {
    if (last_op >= 0 && ops[last_op].handle == handle) return ops[last_op].name;
    for (int i = 0; i < n_ops; i++) {
        if (ops[i].handle == handle) {
            last_op = i;
            return ops[i].name;
        }
    }
    return user_op;
}

/* The communicator's index in `comms`: MPI_COMM_WORLD is 0; another is found by its members'
 * world ranks once, then cached on it as an attribute (freed with it, not copied by a dup). */
static int comm_of(MPI_Comm comm) {
    void *value = NULL;
    int found = 0, size = 0;
    if (comm == MPI_COMM_WORLD) return 0;
    PMPI_Comm_get_attr(comm, keyval, &value, &found);
    if (found) return (int)(intptr_t)value - 1;
    comm_t info = {0, 0, 0, NULL};
    MPI_Group group;
    PMPI_Comm_size(comm, &size);
    PMPI_Comm_rank(comm, &info.rank);
    PMPI_Comm_test_inter(comm, &info.inter);
    info.size = size;
    info.members = malloc(sizeof(int) * (size_t)(size ? size : 1));
    int *ranks = malloc(sizeof(int) * (size_t)(size ? size : 1));
    for (int i = 0; i < size; i++) ranks[i] = i;
    PMPI_Comm_group(comm, &group);
    PMPI_Group_translate_ranks(group, size, ranks, world_group, info.members);
    PMPI_Group_free(&group);
    free(ranks);
    int index = -1;
    for (int i = 1; i < n_comms && index < 0; i++) {
        if (comms[i].size == size && comms[i].inter == info.inter && comms[i].rank == info.rank &&
            memcmp(comms[i].members, info.members, sizeof(int) * (size_t)size) == 0)
            index = i;
    }
    if (index < 0) {
        if (n_comms == cap_comms) {
            cap_comms *= 2;
            comms = realloc(comms, sizeof(comm_t) * (size_t)cap_comms);
        }
        comms[n_comms] = info;
        index = n_comms++;
    } else {
        free(info.members);
    }
    PMPI_Comm_set_attr(comm, keyval, (void *)(intptr_t)(index + 1));
    return index;
}

static unsigned long long key_hash(const call_t *c) {
    unsigned long long h = 1469598103934665603ULL;
    long long parts[6] = {c->kind, c->comm, c->bytes, c->dtype, c->op, c->root};
    for (int i = 0; i < 6; i++) h = (h ^ (unsigned long long)parts[i]) * 1099511628211ULL;
    return h ^ (h >> 29);
}

static int same_key(const call_t *a, const call_t *b) {
    return a->kind == b->kind && a->comm == b->comm && a->bytes == b->bytes &&
           a->dtype == b->dtype && a->op == b->op && a->root == b->root;
}

static void grow_slots(void) {
    int size = n_slots ? n_slots * 2 : 64;
    int *fresh = calloc((size_t)size, sizeof(int));
    for (int i = 0; i < n_calls; i++) {
        unsigned long long at = key_hash(&calls[i]) & (unsigned long long)(size - 1);
        while (fresh[at]) at = (at + 1) & (unsigned long long)(size - 1);
        fresh[at] = i + 1;
    }
    free(slots);
    slots = fresh;
    n_slots = size;
}

/* The call's index in `calls`, added on first sight. */
static int call_index(const call_t *key) {
    if (2 * (n_calls + 1) > n_slots) grow_slots();
    unsigned long long at = key_hash(key) & (unsigned long long)(n_slots - 1);
    while (slots[at]) {
        if (same_key(&calls[slots[at] - 1], key)) return slots[at] - 1;
        at = (at + 1) & (unsigned long long)(n_slots - 1);
    }
    if (n_calls == cap_calls) {
        cap_calls = cap_calls ? cap_calls * 2 : 64;
        calls = realloc(calls, sizeof(call_t) * (size_t)cap_calls);
    }
    calls[n_calls] = *key;
    slots[at] = n_calls + 1;
    return n_calls++;
}

static void add_to_order(int index) {
    if (order_cut) {
        dropped++;
    } else if (order_len > 0 && order_call[order_len - 1] == index) {
        order_times[order_len - 1]++;
    } else if (order_len == max_order) {
        order_cut = 1;
        dropped++;
    } else {
        if (order_len == order_cap) {
            order_cap = order_cap ? order_cap * 2 : 1024;
            if (order_cap > max_order) order_cap = max_order;
            order_call = realloc(order_call, sizeof(int) * (size_t)order_cap);
            order_times = realloc(order_times, sizeof(long long) * (size_t)order_cap);
        }
        order_call[order_len] = index;
        order_times[order_len++] = 1;
    }
}

static void write_record(void) {
    const char *folder = getenv(DIR_ENV);
    char path[4096], staged[4096], version[MPI_MAX_LIBRARY_VERSION_STRING + 1] = "";
    int length = 0;
    snprintf(path, sizeof path, "%s/rank-%d-%ld.txt", folder, world_rank, (long)getpid());
    snprintf(staged, sizeof staged, "%s/.rank-%d-%ld.tmp", folder, world_rank, (long)getpid());
    FILE *out = fopen(staged, "w");
    if (out == NULL) {
        fprintf(stderr, "collsweep recorder: cannot write %s\n", staged);
        return;
    }
    PMPI_Get_library_version(version, &length);
    version[strcspn(version, "\r\n")] = '\0';
    fprintf(out, "collsweep-record 1\nrank %d %d %ld\nlibrary %s\n", world_rank, world_size,
            (long)getpid(), version);
    for (int i = 0; i < n_comms; i++) {
        fprintf(out, "comm %d %d %d %d ", i, comms[i].size, comms[i].rank, comms[i].inter);
        if (comms[i].members == NULL) fputs("world", out);
        for (int m = 0; comms[i].members != NULL && m < comms[i].size; m++)
            fprintf(out, m ? ",%d" : "%d", comms[i].members[m] < 0 ? -1 : comms[i].members[m]);
        fputc('\n', out);
    }
    for (int i = 0; i < n_calls; i++) {
        const call_t *c = &calls[i];
        fprintf(out, "call %s %d %lld %s %s %d %lld\n", RECORDED[c->kind], c->comm, c->bytes,
                names[c->dtype], names[c->op], c->root, c->calls);
    }
    for (int k = 0; k < N_COUNTED; k++)
        if (counted[k]) fprintf(out, "other %s %lld\n", COUNTED[k], counted[k]);
    for (int k = 0; k < N_RECORDED; k++) {
        if (inter_calls[k]) fprintf(out, "other %s:inter %lld\n", RECORDED_MPI[k], inter_calls[k]);
        if (empty_calls[k]) fprintf(out, "other %s:empty %lld\n", RECORDED_MPI[k], empty_calls[k]);
    }
    for (long long i = 0; i < order_len; i++)
        fprintf(out, "order %d %lld\n", order_call[i], order_times[i]);
    fprintf(out, "dropped %lld\nend\n", dropped);
    if (fclose(out) != 0 || rename(staged, path) != 0)
        fprintf(stderr, "collsweep recorder: cannot write %s\n", path);
}

static void finish(void) {
    lock();
    if (state == ON) write_record();
    state = DONE;
    unlock();
}

static void at_exit(void) { finish(); }

/* Once MPI is up: ON when a folder is named (tables ready, finish() at exit), else OFF for
 * good (every wrapper a plain pass-through). */
static void setup(void) {
    int initialized = 0, finalized = 0;
    lock();
    if (set_up) {
        unlock();
        return;
    }
    PMPI_Initialized(&initialized);
    PMPI_Finalized(&finalized);
    if (!initialized || finalized) {
        unlock();
        return;
    }
    set_up = 1;
    const char *folder = getenv(DIR_ENV), *cap = getenv(MAX_ORDER_ENV);
    if (folder == NULL || folder[0] == '\0') {
        state = DONE;
        unlock();
        return;
    }
    if (cap != NULL && atoll(cap) > 0) max_order = atoll(cap);
    PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &world_size);
    PMPI_Comm_group(MPI_COMM_WORLD, &world_group);
    PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &keyval, NULL);
    cap_comms = 8;
    comms = malloc(sizeof(comm_t) * (size_t)cap_comms);
    comms[0] = (comm_t){world_size, world_rank, 0, NULL};
    n_comms = 1;
    known_names();
    atexit(at_exit);
    __atomic_store_n(&state, ON, __ATOMIC_RELEASE);
    unlock();
}

int collsweep_recording(void) {
    if (!set_up) setup();
    return __atomic_load_n(&state, __ATOMIC_ACQUIRE) == ON;
}

/* One call of a recorded collective: `per_rank` counts of the datatype per rank where the
 * whole vector is p blocks (allgather, reduce_scatter_block). */
void collsweep_record(int kind, MPI_Comm comm, MPI_Count count, MPI_Datatype type, MPI_Op op,
                      int root, int per_rank) {
    if (!collsweep_recording() || comm == MPI_COMM_NULL || type == MPI_DATATYPE_NULL) return;
    lock();
    if (state == ON) {
        MPI_Count size = 0;
        call_t key = {kind, comm_of(comm), 0, 0, root, 0, 0};
        key.dtype = type_of(type, &size);
        key.op = op == MPI_OP_NULL ? none_op : op_of(op);
        key.bytes = (long long)count * (long long)size * (per_rank ? comms[key.comm].size : 1);
        if (comms[key.comm].inter) {
            inter_calls[kind]++;
        } else if (key.bytes <= 0) {
            empty_calls[kind]++;
        } else {
            int index = call_index(&key);
            calls[index].calls++;
            add_to_order(index);
        }
    }
    unlock();
}

void collsweep_count(int which) {
    if (collsweep_recording()) __atomic_fetch_add(&counted[which], 1, __ATOMIC_RELAXED);
}

int MPI_Init(int *argc, char ***argv) {
    int rc = PMPI_Init(argc, argv);
    setup();
    return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    setup();
    return rc;
}

int MPI_Finalize(void) {
    finish();
    return PMPI_Finalize();
}
