/*
 * mem_estimate.c — how much memory a run will need, checked before it starts.
 *
 * A run that needs more memory than it can have used to find out half-way:
 * PHOLD with 1M LPs under a 6 GB address-space limit stopped with "BUG ...
 * out of memory" and a segfault inside MPI_Abort; with more memory it grew
 * to 19.7 GB and died reading its own statistics back (issue 13, item 6).
 * Now validate asks the model for an estimate, and the run is refused at once
 * when it cannot fit, with the figure and the key that sizes it.
 *
 * What is counted. Everything already allocated when the check runs — the
 * program, MPI, and what the model's configure built (a workload's image and
 * its reference run, AXLE's generated inputs) — is measured, not estimated:
 * the process's resident size and address space at that moment. To it come
 * the allocations still ahead, by part:
 *
 *   nodes    the engine's per-node record, the node's state, its statistics
 *   events   pending events (the queue holds 128-byte events plus its heap)
 *   caches   cache arrays: 88-byte records per 64-byte line (tag, LRU
 *            stamp, state, the line's data; include/cxlsim/cache.h)
 *   memory   simulated memory contents (homes, local memory): at most what
 *            the workload's image holds, in line maps of 64 bytes of data
 *            plus about 72 of directory entry, key and slot per line
 *   output   at the end the writer holds every node's statistics twice (the
 *            packed blobs it received and their unpacked registries)
 *
 * Constants are measurements (Release build, this tree; `cxlsim -v` prints
 * the estimate, tests/mpi/memory_estimate.sh compares it with the peak
 * resident size of real runs and fails if it is below, or far above):
 *
 *   NODE_BYTES 14 KiB   PHOLD, np 2, non-writer rank: 13.7 KB of peak RSS per
 *                       node (20k -> 40k LPs). Almost all of it is the
 *                       statistics registry, which allocates its entries 64
 *                       at a time (168 bytes each) plus two strings per
 *                       statistic; a node with more than 64 statistics (a CN:
 *                       counters of every core) gets NODE_BYTES per 64.
 *   GATHER_BYTES 12 KiB PHOLD, writer minus its own nodes: 11.1-11.6 KB per
 *                       node of the run (np 1 and np 2).
 *   WRITE_BYTES 16 MiB  HDF5's own buffers while the file is written: peak
 *                       minus resident size before the run, 7-10 MB for
 *                       PHOLD with 16 LPs and AXLE (dlrm).
 *
 * The checks: each rank's address space (RLIMIT_AS, ulimit -v) must hold its
 * share plus the output (any survivor may end up writing); the host's
 * available memory (MemAvailable, or a cgroup v2 memory.max if lower) must
 * hold every rank on it (OMPI_COMM_WORLD_LOCAL_SIZE) plus one output. Memory
 * that is allocated but never touched counts too: the estimate errs on the
 * side of refusing, and engine.memory_check = false lets a user who knows
 * better go ahead.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "mem_estimate_priv.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "cxlsim/errmsg.h"

#define NODE_BYTES (14u << 10)
#define GATHER_BYTES (12u << 10)
#define EVENT_BYTES 160u            /* 128-byte event, heap slot, free list */
#define LINE_RECORD_BYTES 88u       /* struct cxs_cache_line */
#define MEMORY_PER_LINE_BYTES 136u  /* line map: 64 data + entry, key, slot */
#define CN_STATS_BLOCKS_PER_CORE 1u /* ~40 counters and histograms per core */
#define WRITE_BYTES (16u << 20)     /* HDF5 while writing: 7-10 MB measured, small runs */

void mem_estimate_phold(const struct cxs_phold_params *p, struct mem_estimate *m)
{
	memset(m, 0, sizeof(*m));
	m->part[MEM_NODES] = (uint64_t)p->lps * NODE_BYTES;
	m->key[MEM_NODES] = "phold.lps";
	m->what[MEM_NODES] = "PHOLD LPs";
	/* one pending event per LP, as in ROSS's PHOLD, plus as many in batches */
	m->part[MEM_EVENTS] = 2 * (uint64_t)p->lps * EVENT_BYTES;
	m->key[MEM_EVENTS] = "phold.lps";
	m->what[MEM_EVENTS] = "pending events";
	m->part[MEM_OUTPUT] = (uint64_t)p->lps * GATHER_BYTES + WRITE_BYTES;
	m->key[MEM_OUTPUT] = "phold.lps";
	m->what[MEM_OUTPUT] = "every LP's statistics gathered on the writer";
}

/* a * b, saturating: configuration values are bounded, their products are not. */
static uint64_t mul_sat(uint64_t a, uint64_t b)
{
	return a != 0 && b > UINT64_MAX / a ? UINT64_MAX : a * b;
}

static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

void mem_estimate_memsys(const struct cxs_config *cfg, uint32_t nnodes, uint64_t configured_bytes,
			 struct mem_estimate *m)
{
	uint64_t cns = cxs_config_uint(cfg, "system", "cns");
	uint64_t cores = cxs_config_uint(cfg, "system", "cores_per_cn");
	uint64_t l1 = cxs_config_size_bytes(cfg, "cache", "l1_size");
	uint64_t l2 = cxs_config_size_bytes(cfg, "cache", "l2_size");
	uint64_t l3 = cxs_config_size_bytes(cfg, "cache", "l3_size");
	uint64_t private_caches = mul_sat(cores, add_sat(l1, l2));
	uint64_t per_cn = add_sat(private_caches, l3) / 64 * LINE_RECORD_BYTES;

	memset(m, 0, sizeof(*m));
	m->part[MEM_NODES] = mul_sat(nnodes, NODE_BYTES) + mul_sat(cns * cores, NODE_BYTES *
								   CN_STATS_BLOCKS_PER_CORE);
	m->key[MEM_NODES] = "system.cns";
	m->what[MEM_NODES] = "nodes and their cores";
	m->part[MEM_CACHES] = mul_sat(cns, per_cn);
	m->key[MEM_CACHES] = l3 >= private_caches ? "cache.l3_size" :
			     l2 >= l1 ? "cache.l2_size" : "cache.l1_size";
	m->what[MEM_CACHES] = "L1, L2 and L3 of every CN";
	/* Homes and local memories hold at most the image's lines, once. */
	m->part[MEM_MEMORY] = configured_bytes / 64 * MEMORY_PER_LINE_BYTES;
	m->key[MEM_MEMORY] = "workload.size";
	m->what[MEM_MEMORY] = "simulated memory contents";
	m->part[MEM_EVENTS] = mul_sat(cns * cores + nnodes, 256 * EVENT_BYTES);
	m->key[MEM_EVENTS] = "system.cns";
	m->what[MEM_EVENTS] = "pending events";
	m->part[MEM_OUTPUT] = mul_sat(nnodes, GATHER_BYTES) + mul_sat(cns * cores, GATHER_BYTES) + WRITE_BYTES;
	m->key[MEM_OUTPUT] = "system.cns";
	m->what[MEM_OUTPUT] = "statistics gathered on the writer";
}

void mem_estimate_axle(uint32_t nnodes, uint64_t configured_bytes, struct mem_estimate *m)
{
	memset(m, 0, sizeof(*m));
	m->part[MEM_NODES] = (uint64_t)nnodes * NODE_BYTES;
	m->key[MEM_NODES] = "axle.pairs";
	m->what[MEM_NODES] = "nodes";
	/* The CCM works on its copy of the generated inputs. */
	m->part[MEM_MEMORY] = configured_bytes;
	m->key[MEM_MEMORY] = "axle.size";
	m->what[MEM_MEMORY] = "workload data on the CCMs";
	m->part[MEM_OUTPUT] = (uint64_t)nnodes * GATHER_BYTES + WRITE_BYTES;
	m->key[MEM_OUTPUT] = "axle.pairs";
	m->what[MEM_OUTPUT] = "statistics gathered on the writer";
}

/* ---- the host --------------------------------------------------------- */

/* A "Key:   N kB" line of a /proc file, in bytes; 0 if absent. */
static uint64_t proc_kb(const char *path, const char *key)
{
	char line[256];
	size_t n = strlen(key);
	uint64_t v = 0;
	FILE *f = fopen(path, "r");

	if (f == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL) {
		if (strncmp(line, key, n) == 0 && line[n] == ':') {
			v = strtoull(line + n + 1, NULL, 10) * 1024;
			break;
		}
	}
	fclose(f);
	return v;
}

/* The room left in this process's cgroup v2 (memory.max - memory.current), or UINT64_MAX. */
static uint64_t cgroup_room(void)
{
	char line[512], path[768];
	uint64_t max = UINT64_MAX, cur = 0;
	FILE *f = fopen("/proc/self/cgroup", "r");

	if (f == NULL)
		return UINT64_MAX;
	path[0] = '\0';
	while (fgets(line, sizeof(line), f) != NULL) {
		if (strncmp(line, "0::", 3) == 0) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(path, sizeof(path), "/sys/fs/cgroup%s", line + 3);
			break;
		}
	}
	fclose(f);
	if (path[0] == '\0')
		return UINT64_MAX;
	for (int k = 0; k < 2; k++) {
		char file[800];
		snprintf(file, sizeof(file), "%s/%s", path, k == 0 ? "memory.max" : "memory.current");
		f = fopen(file, "r");
		if (f == NULL)
			return UINT64_MAX;
		if (fgets(line, sizeof(line), f) != NULL && strncmp(line, "max", 3) != 0) {
			if (k == 0)
				max = strtoull(line, NULL, 10);
			else
				cur = strtoull(line, NULL, 10);
		}
		fclose(f);
	}
	return max == UINT64_MAX ? UINT64_MAX : max > cur ? max - cur : 0;
}

void mem_host_probe(struct mem_host *h, int nranks)
{
	struct rlimit rl;
	uint64_t room = cgroup_room();
	const char *local = getenv("OMPI_COMM_WORLD_LOCAL_SIZE");

	memset(h, 0, sizeof(*h));
	h->rss_bytes = proc_kb("/proc/self/status", "VmRSS");
	h->vm_bytes = proc_kb("/proc/self/status", "VmSize");
	h->as_limit = getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY ?
			      (uint64_t)rl.rlim_cur : UINT64_MAX;
	h->available = proc_kb("/proc/meminfo", "MemAvailable");
	h->available_is = "are available";
	if (h->available == 0)
		h->available = UINT64_MAX; /* not Linux: no host check */
	if (room < h->available) {
		h->available = room;
		h->available_is = "are left in this cgroup (memory.max)";
	}
	h->local_ranks = local != NULL && atoi(local) > 0 ? (uint32_t)atoi(local) : (uint32_t)nranks;
}

/* ---- the check -------------------------------------------------------- */

void mem_format(uint64_t bytes, char *buf, size_t n)
{
	if (bytes >= (UINT64_C(1) << 30))
		snprintf(buf, n, "%.1f GB", (double)bytes / (1 << 30));
	else
		snprintf(buf, n, "%.0f MB", (double)bytes / (1 << 20) + 0.5);
}

/* "nodes 14.3 GB, output 12.0 GB" for the parts above 5 % of total; the largest in *big. */
static void breakdown(const struct mem_estimate *m, uint64_t total, char *buf, size_t n, int *big)
{
	static const char *const names[MEM_NPARTS] = {"nodes", "events", "caches", "memory",
						      "output"};
	size_t o = 0;

	*big = 0;
	buf[0] = '\0';
	for (int i = 0; i < MEM_NPARTS; i++) {
		char f[32];
		if (m->part[i] > m->part[*big])
			*big = i;
		if (m->part[i] == 0 || m->part[i] < total / 20 || o >= n)
			continue;
		mem_format(m->part[i], f, sizeof(f));
		o += (size_t)snprintf(buf + o, n - o, "%s%s %s (%s)", o ? ", " : "", names[i], f,
				      m->what[i] ? m->what[i] : "");
	}
}

int mem_check(const struct mem_estimate *m, const struct mem_host *h, uint32_t nnodes,
	      uint32_t nlocal, char *err, size_t errlen)
{
	uint64_t ahead = 0, share, process, host;
	char parts[400], a[32], b[32];
	int big;

	for (int i = 0; i < MEM_NPARTS; i++)
		if (i != MEM_OUTPUT)
			ahead = add_sat(ahead, m->part[i]);
	/* This rank's nodes' share of what is ahead (block mapping: all about equal). */
	share = nnodes ? (uint64_t)((double)ahead * nlocal / nnodes) : ahead;
	if (share > ahead)
		share = ahead;
	process = add_sat(add_sat(h->vm_bytes, share), m->part[MEM_OUTPUT]);
	host = add_sat(mul_sat(h->local_ranks, add_sat(h->rss_bytes, share)), m->part[MEM_OUTPUT]);
	if (process > h->as_limit) {
		char mapped[32];
		breakdown(m, add_sat(share, m->part[MEM_OUTPUT]), parts, sizeof(parts), &big);
		mem_format(process, a, sizeof(a));
		mem_format(h->as_limit, b, sizeof(b));
		mem_format(h->vm_bytes, mapped, sizeof(mapped));
		cxs_set_err(err, errlen,
			 "memory: a rank needs about %s of address space (%s, and %s already mapped) "
			 "but its limit (RLIMIT_AS, ulimit -v) is %s: lower %s, or raise the limit",
			 a, parts, mapped, b, m->key[big]);
		return -1;
	}
	if (host > h->available) {
		char per[32];
		breakdown(m, add_sat(mul_sat(h->local_ranks, share), m->part[MEM_OUTPUT]), parts,
			  sizeof(parts), &big);
		mem_format(host, a, sizeof(a));
		mem_format(h->available, b, sizeof(b));
		mem_format(h->rss_bytes, per, sizeof(per));
		cxs_set_err(err, errlen,
			 "memory: the run needs about %s on this host (%u rank%s: %s, plus %s per "
			 "rank already in use) but %s %s: lower %s, or spread the ranks over more "
			 "hosts (engine.memory_check = false to run anyway)",
			 a, h->local_ranks, h->local_ranks == 1 ? "" : "s", parts, per, b,
			 h->available_is, m->key[big]);
		return -1;
	}
	return 0;
}
