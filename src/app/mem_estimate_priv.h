/*
 * mem_estimate_priv.h — how much memory a run will need, before it starts
 * (mem_estimate.c).
 */
#ifndef CXLSIM_MEM_ESTIMATE_PRIV_H
#define CXLSIM_MEM_ESTIMATE_PRIV_H

#include <stddef.h>
#include <stdint.h>

#include "cxlsim/config.h"
#include "cxlsim/phold.h"

/* Bytes a run will allocate, by what they hold. */
enum mem_part {
	MEM_NODES,   /* engine and model state of every node, statistics included */
	MEM_EVENTS,  /* pending events in the queues */
	MEM_CACHES,  /* cache arrays (lines with their data) */
	MEM_MEMORY,  /* simulated memory contents: homes, local memory, logs */
	MEM_OUTPUT,  /* on the writer at the end: every node's statistics, gathered */
	MEM_NPARTS
};

struct mem_estimate {
	/* The whole job, summed over nodes (MEM_OUTPUT: the writer alone). */
	uint64_t part[MEM_NPARTS];
	/* For the message: the key that sizes the largest part, and what it is. */
	const char *key[MEM_NPARTS];
	const char *what[MEM_NPARTS];
};

/* Per model, from what its configure produced. */
void mem_estimate_phold(const struct cxs_phold_params *p, struct mem_estimate *m);
/*
 * The memory system: caches and cores from their keys; the simulated memory
 * contents bounded by the workload's image (configured_bytes: what configure
 * allocated, the image and its reference run), which the nodes may copy.
 */
void mem_estimate_memsys(const struct cxs_config *cfg, uint32_t nnodes, uint64_t configured_bytes,
			 struct mem_estimate *m);
void mem_estimate_axle(uint32_t nnodes, uint64_t configured_bytes, struct mem_estimate *m);

/* What this process has, and shares its host with (mem_host_probe). */
struct mem_host {
	uint64_t rss_bytes;       /* resident now (libraries, MPI, configured data) */
	uint64_t vm_bytes;        /* address space now */
	uint64_t as_limit;        /* RLIMIT_AS, UINT64_MAX when unlimited */
	uint64_t available;       /* MemAvailable, or the cgroup's room if smaller */
	const char *available_is; /* "available memory" or "the cgroup's memory.max" */
	uint32_t local_ranks;     /* ranks of the job on this host */
};

void mem_host_probe(struct mem_host *h, int nranks);

/*
 * Whether the run fits: this rank's share (nlocal of nnodes nodes, plus the
 * output if it may write) within RLIMIT_AS, and the host's ranks within the
 * memory available. 0, or -1 with one line naming the figure, the limit and
 * the key to change.
 */
int mem_check(const struct mem_estimate *m, const struct mem_host *h, uint32_t nnodes,
	      uint32_t nlocal, char *err, size_t errlen);

/* "19.7 GB" */
void mem_format(uint64_t bytes, char *buf, size_t n);

#endif /* CXLSIM_MEM_ESTIMATE_PRIV_H */
