/* SPDX-License-Identifier: GPL-2.0 */
/*
 * gpload.h - shared parts of gpload: a user queue on /dev/kfdsim (ring,
 * read/write dispatch ids and one completion signal per ring slot in
 * ordinary memory) and its exactly-once bookkeeping.
 */
#ifndef GPLOAD_H
#define GPLOAD_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "kfdsim_ioctl.h"

#define RING_SLOTS 256

struct gq {
	struct kfdsim_packet *ring;
	_Atomic uint64_t *rptr;
	_Atomic uint64_t *wptr;
	_Atomic uint64_t *sig;	/* RING_SLOTS signals */
	uint64_t retired;	/* packets verified complete */
	uint32_t id;
	int fd;			/* /dev/kfdsim file (KFD context) of the queue */
	void *mem;
	size_t len;
	void *ptrmem;		/* driver buffer holding rptr/wptr, or NULL */
	double work_us[RING_SLOTS];	/* per slot: workgroups x workgroup time */
	double busy_us;		/* sum of work_us over retired packets */
};

extern int fd;			/* /dev/kfdsim: the context new queues go in */
extern bool use_pfnmap;		/* rptr/wptr in a VM_PFNMAP driver buffer */
extern uint32_t queue_type;	/* KFDSIM_QUEUE_TYPE_* of new queues */
extern uint32_t gpu_id;		/* device of new queues */
extern uint16_t pkt_flags;	/* KFDSIM_PKT_F_* of new packets (--barrier) */
extern long errors, lost, doubles, updates, destroy_retries, destroy_freed;

double now_us(void);
void sleep_us(double us);
int q_create(struct gq *q, int prio, bool rocr);
int q_update(struct gq *q, int percent, int prio);
int q_destroy(struct gq *q);
int q_destroy_id(uint32_t id);
int q_outstanding(struct gq *q);
int64_t q_submit(struct gq *q, int wg, double wg_us);
int q_retire(struct gq *q);
bool q_drain(struct gq *q, double timeout_us);
int test_op(int op, uint32_t qid, uint64_t *val);
int selftest(const char *name);
int maps_main(int argc, char **argv);	/* maps.c: gpload maps ... */

#endif /* GPLOAD_H */
