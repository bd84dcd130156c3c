/*
 * graph_priv.h — the generated input graphs of the kernels modelled after
 * GAPBS (k_bfs.c, k_pr.c, k_cc.c, k_sssp.c, k_bc.c, k_tc.c); made in graph.c.
 *
 * Two kinds, after GAPBS's synthetic and real inputs (workload.variant):
 *   0  kron  Kronecker / R-MAT power-law graph (Graph500 parameters a = 0.57,
 *            b = c = 0.19), edge factor 4, vertex ids scrambled: skewed
 *            degrees, tiny diameter, no locality (GAPBS -g; CAMP's pr-kron,
 *            tc-kron)
 *   1  road  road-like planar grid: each vertex linked to its right and lower
 *            neighbour with probability 0.7 and diagonally with 0.1 (mean
 *            degree ~3, the USA road network's 2.4), ids in grid order: high
 *            diameter, strong locality (CAMP's tc-road)
 * Symmetric (every undirected edge stored in both directions), no self loops
 * or duplicates, neighbour lists sorted. Weights (sssp) 1..255, the same in
 * both directions.
 *
 * Shared layout (u32 arrays, each line-aligned): index[nv + 1] (the CSR row
 * offsets), adj[ne], and with weights w[ne].
 */
#ifndef CXLSIM_GRAPH_PRIV_H
#define CXLSIM_GRAPH_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { KGRAPH_KRON = 0, KGRAPH_ROAD = 1 };

struct kgraph {        /* host memory */
	uint32_t nv;
	uint64_t ne;       /* directed edges */
	uint32_t *index;   /* nv + 1 */
	uint32_t *adj;     /* ne */
	uint32_t *w;       /* ne, or NULL */
};

struct kgraph_layout {
	uint32_t nv;
	uint64_t ne;
	uint64_t index_off, adj_off, w_off; /* w_off 0 without weights */
};

/*
 * About `nv` vertices of `kind` (kron: rounded up to a power of two; road:
 * down to a square). -1 with a message naming the kernel.
 */
int kgraph_generate(struct kgraph *g, const char *kernel, uint32_t kind, uint64_t nv,
		    uint64_t seed, bool weighted, char *err, size_t errlen);
void kgraph_free(struct kgraph *g);
/* Reserves the graph's regions from *off (klay_take). */
void kgraph_place(const struct kgraph *g, uint64_t *off, struct kgraph_layout *L);
void kgraph_write(const struct kgraph *g, const struct kgraph_layout *L, uint8_t *img);
/*
 * Level-synchronous top-down BFS, GAPBS's TDStep with its sliding queue, run
 * by every thread of the program (k_bfs, k_bc). The image holds depth[] (u32,
 * all ~0 but the source's 0), the queue (u32[nv], the source first), its
 * tail word (1) and a barrier. Each level, thread t takes its share of the
 * level's window of the queue; for each neighbour still at ~0 it swaps in
 * depth d + 1 (an atomic, as GAPBS's compare-and-swap: exactly one thread
 * wins a vertex), and the winner appends it to a local buffer that goes to
 * the queue with one fetch-and-add on the tail per 64 vertices. Depths and
 * the tail are deterministic; the queue's order is not, so run() clears it
 * after the ROI. Returns the number of levels (max depth + 1).
 */
struct kbfs_layout {
	uint64_t depth_off, queue_off, tail_off, barrier_off;
	uint64_t levels_off; /* 0, or u64[nv + 1]: where each level starts in the queue */
};
struct cxs_kt;
uint32_t kgraph_bfs(struct cxs_kt *kt, const struct kgraph_layout *L, const struct kbfs_layout *B);
/*
 * With levels_off set, thread 0 records each level's start in the queue
 * (level d is queue[levels[d] .. levels[d + 1])) and the queue is kept.
 */
/* Clears the thread's share of the queue (after the ROI; see above). */
void kgraph_bfs_clear_queue(struct cxs_kt *kt, const struct kbfs_layout *B, uint32_t nv);
void kgraph_bfs_place(uint32_t nv, bool levels, uint64_t *off, struct kbfs_layout *B);
void kgraph_bfs_init(const struct kbfs_layout *B, uint32_t nv, uint32_t source, uint8_t *img);
/*
 * Walking the edges of up to 8 vertices in batches (the program side of
 * every graph kernel): kedges_begin issues the vertices' index loads
 * together; each kedges_next issues the next KGRAPH_BATCH neighbour-id loads
 * (sequential) and returns them with the edge's source (an index into u[])
 * and its position in adj (for weights); 0 when every edge is done. The
 * caller then issues its loads of the neighbours' data for the whole batch
 * before it uses any: the loads an out-of-order core has in flight over a
 * few iterations of the kernel's inner loop.
 */
struct kedges {
	const struct kgraph_layout *L;
	uint32_t n, i, e, lo[8], hi[8];
};
void kedges_begin(struct cxs_kt *kt, struct kedges *it, const struct kgraph_layout *L,
		  const uint32_t *u, uint32_t n);
uint32_t kedges_next(struct cxs_kt *kt, struct kedges *it, uint8_t *src, uint32_t *v,
		     uint32_t *pos);
/* Degree of u[i] after kedges_begin. */
static inline uint32_t kedges_degree(const struct kedges *it, uint32_t i)
{
	return it->hi[i] - it->lo[i];
}

/* The vertex of largest degree (lowest id on ties): a deterministic source. */
uint32_t kgraph_hub(const struct kgraph *g);
/* Batch of neighbours a program issues loads for at once (an OoO window's worth). */
#define KGRAPH_BATCH 32u

/* The one-line description of the kinds, for kernels' docs and errors. */
#define KGRAPH_KINDS "0 kron (power-law), 1 road (planar grid)"

#endif /* CXLSIM_GRAPH_PRIV_H */
