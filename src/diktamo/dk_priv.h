/*
 * dk_priv.h — what DIKTAMO's node components share: the wire records of the
 * replication and log-dump messages, and the port handlers the nodes register.
 */
#ifndef CXLSIM_DK_PRIV_H
#define CXLSIM_DK_PRIV_H

#include <stddef.h>
#include <stdint.h>

#include "cxlsim/diktamo.h"

#define DK_MAX_WORDS 64 /* stores in one replication: a store-buffer group */
#define DK_MAX_CNS 64   /* the homes' sharer vectors */

/* REPL (Fig. 4a): requester CN << 8 | core, its sequence number, the words. */
struct dk_repl {
	uint32_t requester;
	uint32_t repl;
	uint8_t n;
	uint8_t atomic;
	uint8_t at_head;  /* its group is at the store-buffer head: never refused */
	uint8_t pad[5];
	struct {
		uint64_t addr;  /* word address */
		uint64_t value; /* the store's value (an atomic's operand) */
	} w[DK_MAX_WORDS];
};
/* On the wire: header 16 + requester, word mask, line fields 8 + 8 per word. */
#define DK_REPL_WIRE(n) (24u + 8u * (uint32_t)(n))

/* REPL_ACK, or with nack a refusal: an early REPL that found no room. */
struct dk_ack {
	uint32_t requester;
	uint32_t repl;
	uint8_t nack;
	uint8_t pad[7];
};

/*
 * VAL (Fig. 4b): requester, sequence number, 7-bit TS, the stamp; then
 * nstamps per-word stamps (0: word i's is stamp0 + i) and nvalues word values
 * (0: the REPL's values stand).
 */
struct dk_val {
	uint32_t requester;
	uint32_t repl;
	uint8_t ts;
	uint8_t nstamps;
	uint8_t nvalues;
	uint8_t pad[5];
	uint64_t stamp0;
	uint64_t w[2 * DK_MAX_WORDS];
};
/* On the wire: header with TS 16 + stamp 8 + 8 per stamp or value carried. */
#define DK_VAL_WIRE(v) (24u + 8u * (uint32_t)(v))

/* Log dumps (§IV-E): synchronisation through the coordinating MN, and the chunks. */
enum dk_sync_kind {
	DK_SYNC_ACTIVE = 1, /* LU -> coordinator: logging again after an idle round */
	DK_SYNC_EARLY,      /* LU -> coordinator: past the high watermark, flush now */
	DK_SYNC_BEGIN,      /* coordinator -> LUs: dump round `round` */
	DK_SYNC_DONE,       /* LU -> coordinator: its chunks of the round are sent */
	DK_SYNC_END,        /* coordinator -> LUs: the round is over (flag: it went idle) */
};
struct dk_sync {
	uint8_t kind;
	uint8_t flag;  /* DONE: the LU logged since the last round; END: the coordinator idles */
	uint16_t pad;
	uint32_t round;
};

struct dk_dump {
	uint32_t round;
	uint32_t from;     /* the Logging Unit's CN */
	uint64_t raw_len;  /* bytes before compression */
	uint64_t nentries;
	uint64_t len;      /* compressed bytes that follow */
	unsigned char bytes[];
};
/* Saved in 64-byte messages: 80 bytes on the wire per 64 bytes of log (header + data). */
static inline uint32_t dk_dump_wire(uint64_t len)
{
	uint64_t msgs = (len + 63) / 64;
	return (uint32_t)((msgs ? msgs : 1) * 80u);
}

/* Recovery (recovery.c): INTERRUPT, INIT_RECOV, RECOV_END and their answers. */
struct dk_rec_msg {
	uint32_t round; /* the CM's recovery round */
	uint32_t cm;    /* the CM's node id */
	uint64_t dead;  /* INTERRUPT, INIT_RECOV: the failed CNs recovered; RECOV_END: all recovered */
};
/* INIT_RECOV_RESP: an MN's part of the round (begins as dk_rec_msg does). */
struct dk_rec_report {
	uint32_t round;
	uint32_t cm;
	uint64_t dead;
	cxs_time trav_dir_ps, mn_lu_ps, trav_lu_ps, merge_ps;
	uint64_t lines, words_from_lu, words_from_mn, words_kept, lost_lines, lost_words;
	uint64_t dirty_lines; /* of `lines`: the recovered words changed memory (Fig. 15's M) */
};
_Static_assert(offsetof(struct dk_rec_report, round) == offsetof(struct dk_rec_msg, round) &&
		       offsetof(struct dk_rec_report, cm) == offsetof(struct dk_rec_msg, cm),
	       "an INIT_RECOV_RESP is read as a dk_rec_msg first");
/* FETCH_LATEST: the Owned lines (line addresses) of one MN. */
struct dk_fetch {
	uint32_t round, cm;
	uint32_t nlines, pad;
	uint64_t line[];
};
struct dk_version {
	uint64_t addr, value, stamp;
};
/* FETCH_LATEST_RESP: the unit's latest VALed version of each word it holds, and its scan. */
struct dk_fetch_resp {
	uint32_t round, cm;
	uint32_t n, pad;
	cxs_time scan_ps;
	struct dk_version v[];
};

/* Port handlers (registered by the nodes for their message types). */
void dk_sender_on_ack(void *ctx, cxs_time now, const struct cxs_envelope *env, const void *body,
		      uint32_t len);
void dk_logger_on_repl(void *ctx, cxs_time now, const struct cxs_envelope *env, const void *body,
		       uint32_t len);
void dk_logger_on_val(void *ctx, cxs_time now, const struct cxs_envelope *env, const void *body,
		      uint32_t len);
void dk_logger_on_sync(void *ctx, cxs_time now, const struct cxs_envelope *env, const void *body,
		       uint32_t len);
void dk_keeper_on_dump(void *ctx, cxs_time now, const struct cxs_envelope *env, const void *body,
		       uint32_t len);
void dk_keeper_on_sync(void *ctx, cxs_time now, const struct cxs_envelope *env, const void *body,
		       uint32_t len);

#endif /* CXLSIM_DK_PRIV_H */
