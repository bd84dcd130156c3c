#!/bin/bash
# Slurm batch script for a 32-rank cxlsim run that survives a killed rank.
# sbatch mpi-configs/slurm.example.sh inputs/default.ini
#SBATCH --job-name=cxlsim
#SBATCH --ntasks=32
#SBATCH --time=01:00:00
#SBATCH --no-kill            # keep the allocation when a node fails
set -euo pipefail
cd "${SLURM_SUBMIT_DIR:-.}"
# Under Slurm, mpirun takes hosts and slots from the allocation.
mpirun --enable-recovery --mca orte_abort_on_non_zero_status 0 \
	-np "$SLURM_NTASKS" \
	build/src/cxlsim "$@" -o "cxlsim-$SLURM_JOB_ID.h5"
