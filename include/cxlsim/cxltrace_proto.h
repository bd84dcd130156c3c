/*
 * cxltrace_proto.h — the stream from the Valgrind tool (cxltrace.c) to the
 * recorder (src/workload/trace_record.c), over a pipe the recorder made.
 *
 * Why a pipe and not trace files written by the tool: a Valgrind tool is a
 * static executable without libc, so it has no zlib, and the trace format
 * (include/cxlsim/trace.h) is then written in one place only, by the
 * recorder, with the writer every other trace goes through. It also puts
 * the compression on a second core while Valgrind runs the program.
 *
 * The stream is a sequence of chunks, each a header and its payload:
 *
 *   u32 magic      CXT_MAGIC
 *   u32 kind       enum cxt_kind
 *   u32 thread     the trace thread number (0: the thread that starts the ROI,
 *                  then in order of creation); CXT_END: the thread count
 *   u32 count      CXT_RECORDS: records that follow; CXT_ERROR: message bytes
 *
 * CXT_RECORDS carries count struct cxt_rec of that thread, in program
 * order; CXT_THREAD_END says the thread exited (no more records); CXT_END
 * closes the stream after every thread's last records; CXT_ERROR carries a
 * message that makes the recording fail. Both sides are the same machine,
 * so the structs travel as they are in memory (pinned by _Static_assert).
 */
#ifndef CXLSIM_CXLTRACE_PROTO_H
#define CXLSIM_CXLTRACE_PROTO_H

#define CXT_MAGIC 0x52545843u /* "CXTR" */

enum cxt_kind {
	CXT_RECORDS = 1,
	CXT_THREAD_END = 2,
	CXT_END = 3,
	CXT_ERROR = 4,
};

struct cxt_chunk {
	unsigned int magic, kind, thread, count;
};

/* One trace record (trace.h's fields, in the order of its version 2 record). */
struct cxt_rec {
	unsigned long long addr;
	unsigned long long value;
	unsigned int gap;
	unsigned short addr_dep, value_dep;
	unsigned char op, size, flags, pad;
	unsigned int pad2;
};

_Static_assert(sizeof(struct cxt_chunk) == 16, "chunk header is 16 bytes");
_Static_assert(sizeof(struct cxt_rec) == 32, "a record on the pipe is 32 bytes");

/* Records per chunk (and per thread buffer in the tool): 128 KiB. */
#define CXT_CHUNK_RECORDS 4096

/*
 * The recorder's own synchronisation words (where = other): thread k's
 * start event at CXT_SYNC_BASE + k * 128, its exit event 64 bytes above.
 * Above 2^47, so no user-space address of an x86-64 program is one.
 */
#define CXT_SYNC_BASE 0x0000900000000000ull
#define CXT_START_ADDR(k) (CXT_SYNC_BASE + (unsigned long long)(k) * 128)
#define CXT_EXIT_ADDR(k) (CXT_START_ADDR(k) + 64)

#endif /* CXLSIM_CXLTRACE_PROTO_H */
