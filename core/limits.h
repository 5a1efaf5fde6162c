/* limits.h: prereg's caps on untrusted input, in one place. Each is what
 * prereg holds at most from one source, with why that much.
 * SPDX-License-Identifier: MIT
 */
#ifndef PREREG_CORE_LIMITS_H
#define PREREG_CORE_LIMITS_H

/* Lines between a node runner and the Slurm coordinator */

/* The longest line a node runner may send (1 MiB): a row line is a CSV
 * record of a few hundred bytes (a reason quoting a command is cut far
 * shorter), the preflight's facts a few KiB; a longer one is refused and
 * its step taken as lost, never held in memory whole. */
#define CORE_NODE_LINE_MAX ((size_t)1 << 20)

#endif
