/* limits.h: the caps that bound prereg's time and memory on any input,
 * one block, each with why it is what it is.
 * SPDX-License-Identifier: MIT
 */
#ifndef PREREG_CORE_LIMITS_H
#define PREREG_CORE_LIMITS_H

/* prereg plan: its own budget */

/* Simulated experiments per comparison and size (--sims): 1000 gives
 * probabilities to about +-1.6 points; a million would be hours. */
#define PLAN_MAX_SIMS 100000L
/* Candidate sizes (--sizes). */
#define PLAN_MAX_SIZES 32
/* The largest candidate size: the exact law of a resample median is
 * tabled up to this many values (ANALYSIS_TABLE_MAX). */
#define PLAN_MAX_SIZE 2048L
/* Values drawn in all (comparisons x 2 simulations x sims x the sizes
 * summed x 2 arms): about 20 ns each, so the cap is minutes, not days. */
#define PLAN_MAX_DRAWS 20000000000.0
/* Pilot values one cell may hold for the plan (they are drawn from by
 * index, kept in memory). */
#define PLAN_MAX_PILOT 1000000L
/* Atoms of a resample median's law with less probability than this are
 * left out: at most n^2/2 of them, so under 2e-9 in all at n = 2048,
 * against interval ends at probabilities of 0.005 or more. */
#define PLAN_ATOM_FLOOR 1e-15

/* prereg pilot */

/* Rounds per arm and workload a pilot may run (--runs). */
#define PILOT_MAX_RUNS 1000L

#endif
