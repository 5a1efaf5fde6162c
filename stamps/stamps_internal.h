/* stamps_internal.h: what the files of stamps/ share and nobody else
 * sees.
 * SPDX-License-Identifier: MIT
 */
#ifndef PREREG_STAMPS_INTERNAL_H
#define PREREG_STAMPS_INTERNAL_H

#include "core/limits.h"
#include "data/data.h"
#include "stamps/stamps.h"

/* Data stamps (stamp_data.c) */

/** 1 when name is "manifest-BATCH.EXT" (a data stamp's text or token);
 * OUT: batch. */
int data_manifest_stamp_name(const char *name, const char *ext,
                             char batch[16]);
/** verify's check of every data stamp of stamps/ (data_stamps_verify):
 * vstamps holds each version's checked stamp (secs 0: none). */
core_status data_manifest_stamps_verify(const data_experiment *exp,
                                        const char *ca,
                                        const core_stamp *vstamps,
                                        core_buf *report, long *problems,
                                        int *before_plan, core_err *err);

#endif
