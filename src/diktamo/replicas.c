/*
 * replicas.c — which CNs keep a line's replicas, and which of them saves the
 * line's log entries to the MNs (DIKTAMO §III-A, §IV-E, §VI "Configurations":
 * "a hash function maps the line address to a Replica Group").
 *
 * A line is the global line address, byte address >> 6 (coherence.h).
 *
 * Groups. With live CNs live[0 .. nlive-1] (ascending ids), line L's group
 * is the g = min(n_r, nlive) CNs at positions
 *
 *     s, s+1, ..., s+g-1  (mod nlive),   s = H1(L) mod nlive
 *
 * so there are exactly nlive distinct groups, one per starting position, and
 * every live CN is in exactly g of them: with a uniform H1, every CN keeps the
 * same share g/nlive of the lines (balance), and the members of one group are
 * distinct because g <= nlive. The writer of a line may be one of them
 * (§III-A). When a CN dies the caller passes the shorter live list, and each
 * line's group is again g distinct live CNs (most lines then change group,
 * which is what recovery's re-replication has to cope with; consistent
 * hashing would move fewer lines at the price of uneven shares).
 *
 * Saver. Inside a group, member number H2(L) mod g saves L's entries at a
 * dump (§IV-E divides the work "by range of physical addresses"; a hash of
 * the line is such a division that stays even whatever the address layout).
 *
 * H1 and H2 are the splitmix64 finaliser (diktamo_priv.h) of L plus two
 * different multiples of the golden-ratio constant: independent of each
 * other, so which member saves a line does not depend on where its group
 * starts. The modulo's bias is at most nlive / 2^64. Measured over 100 000
 * consecutive lines on 16 CNs (tests/unit/diktamo): every CN's share is
 * within 5 % of the mean for n_r = 1..4.
 */
#include <assert.h>

#include "cxlsim/diktamo.h"
#include "diktamo_priv.h"

uint32_t cxs_dk_replicas(uint64_t line, const uint32_t *live, uint32_t nlive, uint32_t n_r,
			 uint32_t out[CXS_DK_MAX_REPLICAS])
{
	assert(n_r >= 1 && n_r <= CXS_DK_MAX_REPLICAS);
	if (nlive == 0)
		return 0;
	assert(live != NULL);
	uint32_t g = n_r < nlive ? n_r : nlive;
	uint32_t s = (uint32_t)(dk_mix64(line + DK_GOLDEN) % nlive);
	for (uint32_t i = 0; i < g; i++) {
		uint32_t p = s + i;
		out[i] = live[p >= nlive ? p - nlive : p];
	}
	return g;
}

uint32_t cxs_dk_saver(uint64_t line, uint32_t group_size)
{
	assert(group_size >= 1);
	return (uint32_t)(dk_mix64(line + 2 * DK_GOLDEN) % group_size);
}
