/* limits.h: the caps prereg puts on what it reads and keeps, in one
 * place, each with why it is the size it is.
 * SPDX-License-Identifier: MIT
 */
#ifndef PREREG_LIMITS_H
#define PREREG_LIMITS_H

/* A sheet's `inputs` are hashed before every batch and copied into the
 * data folder with each version, so they stay small: scripts,
 * configuration and small data (larger trees are an `image` digest).
 * The most bytes all inputs of a sheet may hold together: */
#define PREREG_INPUTS_MAX_BYTES ((long long)16 << 20)
/* The most files they may hold (a folder's files each count): */
#define PREREG_INPUTS_MAX_FILES 1000
/* The deepest folder nesting under an input folder: */
#define PREREG_INPUTS_MAX_DEPTH 16

#endif
