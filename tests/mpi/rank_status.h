/*
 * rank_status.h — the launch recipe's exit-status protocol for the test
 * programs that drive the engine directly (mpi-configs/cxlsim-mpirun: under
 * its failure-survival options mpirun exits 0 whatever its ranks return, so
 * each rank leaves its status in CXLSIM_STATUS_DIR/rank-R, as cxlsim does).
 */
#ifndef CXLSIM_TESTS_RANK_STATUS_H
#define CXLSIM_TESTS_RANK_STATUS_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static inline void report_rank_status(int rc)
{
	const char *dir = getenv("CXLSIM_STATUS_DIR");
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (!dir)
		return;
	char path[4096];
	snprintf(path, sizeof path, "%s/rank-%d", dir, rank);
	FILE *f = fopen(path, "w");
	if (f) {
		fprintf(f, "%d\n", rc);
		fclose(f);
	}
}

#endif
