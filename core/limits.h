/* limits.h: the caps prereg puts on what untrusted input may make it
 * hold or do, in one place, each with why it is where it is.
 * SPDX-License-Identifier: MIT
 */
#ifndef PREREG_CORE_LIMITS_H
#define PREREG_CORE_LIMITS_H

/* Imports of other tools' files */

/* Distinct configurations (sets of go benchmark `key: value` lines in
 * effect) one file may hold: `go test ./...` over a large repository has
 * one per package, a few hundred. */
#define IMPORT_CONFIGS_MAX 4096
/* Configuration keys in effect at once (goos, goarch, pkg, cpu and the
 * user's own): a handful in real output. */
#define IMPORT_CONFIG_KEYS_MAX 256
/* Bytes of configuration text built over a whole file (each change of
 * configuration followed by a result builds one): bounds the memory a
 * file that changes its configuration on every line can take. */
#define IMPORT_CONFIG_BYTES_MAX ((size_t)16 << 20)
/* Bytes of an --arm-map file (one name and arm a line). */
#define IMPORT_ARM_MAP_MAX ((size_t)16 << 20)
/* Bytes of a name, a list of names or a value quoted in a message, so
 * that the hint after it always fits. */
#define IMPORT_QUOTE_MAX 300

#endif
