/* SPDX-License-Identifier: MIT */
/*
 * A structure-aware mutator for the trace fuzz targets (issue 25 item 6).
 *
 * libFuzzer's byte mutations mostly break a trace's frames (lengths, varint
 * columns, zstd payloads), so they test the reader's resync and rarely reach
 * the analysis with a record whose *value* is hostile; the crashes, hangs and
 * blow-ups of issue 25 (a string id of 2^31 - 1, a window 2^63 ns from the
 * origin, 2^19 modules, a stack without frames) are valid records with
 * extreme fields. This mutator decodes one trace of the input (the separator
 * convention of fuzz_trace.h), changes its records, and encodes it again
 * with the library's writer, uncompressed: every frame, length and checksum
 * is valid by construction, and only field values and record counts change.
 */
#ifndef FUZZ_MUTATE_H
#define FUZZ_MUTATE_H

#include <stddef.h>
#include <stdint.h>

/**
 * Mutate data (size bytes, room for max) in place: one trace of it is
 * decoded, changed by one of: a numeric field of a record set to an
 * extreme, random or nearby value or to the same field of another record of
 * its type; a record repeated; a record removed; a record of one type
 * copied over as another record of the same type with one field changed
 * (repeated ids); one of the stream header's clocks or its pid changed -
 * one to four of these, then written again with valid frames. Only the
 * first 65536 records of the trace are kept.
 * @return the new size, or 0 when the input holds no trace this can decode
 *         and encode within max (the caller mutates the bytes instead).
 */
size_t ft_mutate_records(uint8_t *data, size_t size, size_t max, unsigned seed);

#endif
