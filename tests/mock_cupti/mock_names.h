/* SPDX-License-Identifier: MIT */
/* Callback names of the mock libcupti (generated cbid_names.c). */
#ifndef MOCK_NAMES_H
#define MOCK_NAMES_H
#include <stdint.h>
typedef struct mock_cbid_name {
	uint32_t id;
	const char *name;
} mock_cbid_name;
extern const mock_cbid_name mock_runtime_names[];
extern const mock_cbid_name mock_driver_names[];
#endif
