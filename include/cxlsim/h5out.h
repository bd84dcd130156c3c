/*
 * h5out.h — one HDF5 file per run.
 *
 * The engine gathers everything a run produced onto one surviving rank (the
 * lowest alive) and that rank alone writes the file with the serial HDF5 API;
 * nothing here is collective, so a rank that died cannot hang the writer.
 * The file is written to "<path>.incomplete" and renamed to <path> only when
 * it is complete (publish.h), so a file under the final name is never half-written. Whether
 * the *run* completed is the root attribute `status`.
 *
 * Layout (documented for users in README.md, "Output"):
 *
 *   /                       attrs: format_version, cxlsim_version, command_line,
 *                                  config (INI text), nranks, nnodes, status,
 *                                  exit_status, checksum, end_time_ps,
 *                                  final_time_ps, wall_seconds, seed, model
 *   /engine/<figure>        1-D dataset over ranks (events, windows, sync_wall_s,
 *                           idle_wall_s, ...), attrs units, description
 *   /nodes/type             1-D string dataset: node type per node id
 *   /nodes/alive            1-D uint8: 0 for nodes that died
 *   /nodes/rank             1-D uint32: hosting rank per node
 *   /nodes/<id>/<component>/<counter>   scalar uint64, attrs units, description
 *   /nodes/<id>/<component>/<hist>      1-D uint64 buckets, attrs units,
 *                           description, count, sum, min, max, bucket_rule
 *   /failures               compound table: node, rank, time_ps, detected_wall_s,
 *                           epoch, cause (may have 0 rows)
 *
 * Details a reader relies on:
 *   - <id> is the node id zero-padded to 4 digits ("/nodes/0007"). Every node
 *     has a group; it is empty when the node's statistics died with its rank.
 *   - Strings (attributes, /nodes/type, failures.cause) are variable-length
 *     UTF-8; a NULL string in the record is written as "".
 *   - Numbers are little-endian: format_version, nranks, nnodes uint32;
 *     exit_status int32; checksum, seed, *_time_ps uint64; wall_seconds f64;
 *     failures: node, rank, epoch uint32, time_ps uint64, detected_wall_s f64.
 *   - Node and component groups track link creation order, so h5py lists
 *     counters in registration order.
 *   - Histogram attribute bucket_rule is the text
 *     "bucket 0: value 0; bucket i>=1: [2^(i-1), 2^i)".
 */
#ifndef CXLSIM_H5OUT_H
#define CXLSIM_H5OUT_H

#include <stddef.h>
#include <stdint.h>

#include "cxlsim/stats.h"

/* One per-rank engine figure: a column over ranks. */
struct cxs_rank_column {
	const char *name;  /* dataset name under /engine */
	const char *unit;
	const char *desc;
	int is_double;     /* values in dvals (1) or uvals (0) */
	const uint64_t *uvals;
	const double *dvals;
};

struct cxs_node_record {
	const char *type;
	uint32_t rank;
	int alive;
	const struct cxs_stats *stats; /* may be NULL for a node whose rank died */
};

struct cxs_failure_record {
	uint32_t node;
	uint32_t rank;
	uint64_t time_ps;        /* simulated failure time agreed by the survivors */
	double detected_wall_s;  /* wall-clock seconds after start when agreed */
	uint32_t epoch;          /* membership epoch that excluded it */
	const char *cause;       /* "injected", "silent", "excluded" */
};

struct cxs_run_record {
	const char *cxlsim_version;
	const char *command_line;
	const char *config_text;
	const char *model;
	const char *status;      /* "complete", "complete-with-failures", "error: ..." */
	int exit_status;
	uint32_t nranks;
	uint64_t seed;
	uint64_t checksum;
	uint64_t end_time_ps;
	uint64_t final_time_ps;
	double wall_seconds;

	size_t ncolumns;
	const struct cxs_rank_column *columns; /* each of length nranks */

	uint32_t nnodes;
	const struct cxs_node_record *nodes;

	size_t nfailures;
	const struct cxs_failure_record *failures;

	/*
	 * Optional: called between nodes while the file is written, so that the
	 * writing rank keeps answering its peers' liveness pings during a long
	 * write (the engine passes its control-message service here).
	 */
	void (*tick)(void *ctx);
	void *tick_ctx;
};

/*
 * Writes the file; returns 0, or -1 with a one-line message in err (err may be
 * NULL), e.g. "out.h5: cannot create file (HDF5: <major> / <minor>: <detail>)".
 * On failure <path>.incomplete is removed and <path> is untouched (still absent,
 * or still the previous run's file). Engine column names must be usable as one HDF5
 * link name: non-empty, no '/', not "." or "..". Uses the serial HDF5 API and
 * no MPI; HDF5's automatic error printing is off during the call.
 */
int cxs_h5_write(const char *path, const struct cxs_run_record *rec, char *err, size_t errlen);

#endif /* CXLSIM_H5OUT_H */
