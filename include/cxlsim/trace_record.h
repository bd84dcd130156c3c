/*
 * trace_record.h — recording a real program as cxlsim traces:
 * `cxlsim-trace record -o DIR -- PROGRAM ARGS...`.
 *
 * The recorder runs the program under Valgrind with the cxltrace tool
 * (src/vgtool/cxltrace.c), reads the tool's stream from a pipe
 * (src/vgtool/cxltrace_proto.h) and writes, in DIR:
 *
 *   core<N>.trace   one trace per thread of the program (trace.h, version 3),
 *                   N = 0 for the thread that starts the region of interest,
 *                   then in order of creation
 *   pages.map       every page touched, by whom and where (page_map.h)
 *   locks.order     whose each lock's turns were (lock_order.h)
 *   trace.ini       the [workload] and [trace] keys that replay it:
 *                   cxlsim MACHINE.ini DIR/trace.ini
 *
 * The program runs as it ships: its exit status is reported, not judged.
 * A recording fails (nothing but .partial files cleaned up, -1 and one
 * line) if Valgrind cannot be run, the tool reports an error, or the stream
 * ends before the tool's end marker (Valgrind crashed, or the program
 * exec'ed another program, which Valgrind does not follow).
 */
#ifndef CXLSIM_TRACE_RECORD_H
#define CXLSIM_TRACE_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cxlsim/trace.h"

struct cxs_trace_record_opts {
	const char *out_dir;
	const char *valgrind;    /* the valgrind command; NULL: "valgrind" from PATH */
	const char *vglib;       /* VALGRIND_LIB holding the tool */
	const char *roi;         /* thread (default) | start | request */
	const char *roi_start;   /* start at the first entry of this function, or NULL */
	bool follow_fork;        /* after a fork the child records, not the parent */
	int level;               /* zlib level of the traces */
	bool verbose;            /* Valgrind's own messages (else -q) */
};

struct cxs_trace_record_stats {
	uint32_t threads;
	uint64_t records;
	uint64_t instructions;                 /* memory records + gaps */
	uint64_t by_op[CXS_TRACE_OP_MAX + 1];
	uint64_t with_addr_dep, with_value_dep;
	uint64_t pages, shared_pages;
	uint64_t lock_turns;                   /* recorded lock acquisitions (turns) */
	uint64_t trace_bytes;                  /* all trace files */
	int status;       /* the program's exit status, or 128 + signal */
};

int cxs_trace_record(const struct cxs_trace_record_opts *o, int argc, char *const argv[],
		     struct cxs_trace_record_stats *st, char *err, size_t errlen);

#endif /* CXLSIM_TRACE_RECORD_H */
