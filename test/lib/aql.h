/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * aql.h - the AQL packet and signal layouts the raw /dev/kfd clients
 * (hsakmt-open, blit-client) write, as ROCr's hsa.h and amd_hsa_signal.h
 * define them.
 */
#ifndef GP_TEST_AQL_H
#define GP_TEST_AQL_H

#include <stdint.h>

/* hsa_kernel_dispatch_packet_t / hsa_barrier_and_packet_t (hsa.h) */
struct aql_packet {
	uint16_t header;
	uint16_t setup;
	uint16_t workgroup_size[3];
	uint16_t reserved0;
	uint32_t grid_size[3];
	uint32_t private_segment_size;
	uint32_t group_segment_size;
	uint64_t kernel_object;
	uint64_t kernarg_address;
	uint64_t reserved2;
	uint64_t completion_signal;
};

/* amd_signal_t: kind, then the value */
struct amd_signal {
	int64_t kind;
	volatile int64_t value;
	uint64_t pad[6];
};

#define AQL_DISPATCH 2
#define AQL_BARRIER_AND 3
#define AQL_BARRIER_BIT (1 << 8)
#define AQL_FENCES (2 << 9 | 2 << 11)	/* system-scope acquire and release */

#endif
