/*
 * h5out.h — one HDF5 file per run, format 2 (column-wise statistics).
 *
 * The engine gathers everything a run produced onto one surviving rank (the
 * lowest alive) and that rank alone writes the file with the serial HDF5 API;
 * nothing here is collective, so a rank that died cannot hang the writer.
 * The file is written under a temporary name ("<path>.partial") and renamed
 * to <path> only when it is complete, so a file under the final name is never
 * half-written. Whether the *run* completed is the root attribute `status`.
 *
 * Layout (documented for users in README.md, "Output"; R rows, S samples):
 *
 *   /                       attrs: format_version = 2, cxlsim_version,
 *                                  command_line, config (INI text), nranks,
 *                                  nnodes, status, exit_status, checksum,
 *                                  end_time_ps, final_time_ps, wall_seconds,
 *                                  seed, model
 *   /engine/<figure>        1-D dataset over ranks (events, windows, sync_wall_s,
 *                           idle_wall_s, ...), attrs units, description
 *   /nodes/type             1-D string dataset: node type per node id
 *   /nodes/alive            1-D uint8: 0 for nodes that died
 *   /nodes/rank             1-D uint32: hosting rank per node
 *   /stats/<group>/         attr instanced (uint8: rows are instances "<group><index>")
 *       node                uint32[R]: node id of each row
 *       index               uint32[R]: instance within the node (0 when not instanced)
 *       <counter>           uint64[R], attrs units, description [, absent_rows]
 *       <hist>/             attrs kind = "histogram", units, description,
 *                           bucket_rule, nbuckets [, absent_rows]
 *           buckets         uint64[R, nbuckets]
 *           count, sum, min, max   uint64[R]
 *           nbuckets        uint32[R], only when rows have different counts
 *       <vector>/           attrs kind = "vector", units, description [, absent_rows]
 *           values          uint64[total]: every row's values, concatenated
 *           offsets         uint64[R + 1]: row r is values[offsets[r]:offsets[r+1]]
 *   /series/                only when sampling; attr interval_ps
 *       time_ps             uint64[S]: 0, I, 2I, ... (I = output.sample_interval)
 *       <group>/            attr instanced; node, index as in /stats (the rows
 *                           that have a sampled counter)
 *           <counter>       uint64[R, S], attrs units, description [, absent_rows]
 *   /failures               compound table: node, rank, time_ps, detected_wall_s,
 *                           epoch, cause (may have 0 rows)
 *
 * Details a reader relies on:
 *   - A group is a component ("port", "l1") or, for components declared with
 *     cxs_stats_instance, their group ("core" for core0, core1, ...). Rows are
 *     ordered by node id, then index. Only nodes whose statistics reached the
 *     writer have rows: a node that died with its rank has none; one failed
 *     with --fail keeps its rows as they were when it failed (/nodes/alive
 *     tells them apart).
 *   - A row that lacks a statistic reads 0 (an empty range for a vector) and
 *     the statistic's attribute absent_rows (uint32[]) lists those rows; it is
 *     there only when some row lacks it.
 *   - Groups and columns are listed in link creation order, which is the order
 *     of first registration scanning nodes by id (h5py honours it).
 *   - Series sample k is each counter's value after every event of its node
 *     before time k * I (engine.c, "Time series"); S = final_time_ps / I + 2,
 *     so the last sample holds the final values.
 *   - Strings (attributes, /nodes/type, failures.cause) are variable-length
 *     UTF-8; a NULL string in the record is written as "".
 *   - Numbers are little-endian: format_version, nranks, nnodes uint32;
 *     exit_status int32; checksum, seed, *_time_ps uint64; wall_seconds f64;
 *     failures: node, rank, epoch uint32, time_ps uint64, detected_wall_s f64.
 *   - Histogram attribute bucket_rule is the text
 *     "bucket 0: value 0; bucket i>=1: [2^(i-1), 2^i)".
 *   - Datasets of 64 KiB or more are chunked with shuffle + deflate (any HDF5
 *     reader decodes them); smaller ones are contiguous. The file uses the
 *     HDF5 1.8 object format.
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
	 * Time series: the interval the nodes sampled at (0: none, no /series).
	 * The writer derives the sample count from final_time_ps and pads each
	 * node's samples with its last one (see /series above).
	 */
	uint64_t sample_interval_ps;

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
 * On failure <path>.partial is removed and <path> is untouched (still absent,
 * or still the previous run's file). Engine column names must be usable as one HDF5
 * link name: non-empty, no '/', not "." or "..". Uses the serial HDF5 API and
 * no MPI; HDF5's automatic error printing is off during the call.
 */
int cxs_h5_write(const char *path, const struct cxs_run_record *rec, char *err, size_t errlen);

#endif /* CXLSIM_H5OUT_H */
