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
	bool ext[RING_SLOTS];	/* per slot: signals another's signal (retired by rptr) */
	double busy_us;		/* sum of work_us over retired packets */
};

/*
 * The signal area shared by the queues of a dependency (--dep-stream: one
 * process's anonymous memory; --dep-shm: /dev/shm/NAME mapped by both
 * processes, see gpload.c).  Every queue of the dependency has all of it as
 * its signal area, so a dispatch of one can signal what a barrier packet of
 * the other waits on.
 */
#define DEP_SLOTS 256
#define DEP_MAGIC 0x6770646570733031ULL	/* "gpdeps01" */
struct dep_area {
	_Atomic uint64_t sig[2][RING_SLOTS];	/* completion signals: [0] LC, [1] producer */
	_Atomic uint64_t dep[DEP_SLOTS];	/* LC's dependency signals S */
	_Atomic uint32_t req[DEP_SLOTS];	/* request ring: slot numbers */
	_Atomic double req_us[DEP_SLOTS];	/* ... and their submit times (now_us) */
	_Atomic uint64_t req_head;		/* posted (LC) */
	_Atomic uint64_t req_tail;		/* taken (producer) */
	_Atomic uint64_t magic;			/* DEP_MAGIC once set up */
	_Atomic int32_t producer_pid;		/* serving; 0: not (yet, or any more) */
	_Atomic int32_t lc_pid;			/* the one LC client; 0: none */
};

extern int fd;			/* /dev/kfdsim: the context new queues go in */
extern bool use_pfnmap;		/* rptr/wptr in a VM_PFNMAP driver buffer */
extern bool hide_ids;		/* --hide-ids: rptr/wptr page PROT_NONE after creation */
extern bool forge_ids;		/* --forge-ids: a page of zeros there instead */
extern uint32_t cu_mask[32];	/* --cu-mask, 1024 bits at most */
extern uint32_t cu_mask_bits;	/* its length, a multiple of 32; 0: none */
int q_set_cu_mask(struct gq *q, const uint32_t *mask, uint32_t bits);
extern uint32_t queue_type;	/* KFDSIM_QUEUE_TYPE_* of new queues */
extern uint32_t gpu_id;		/* device of new queues */
extern uint16_t pkt_flags;	/* KFDSIM_PKT_F_* of new packets (--barrier) */
extern long errors, lost, doubles, updates, destroy_retries, destroy_freed;

double now_us(void);
void sleep_us(double us);
int q_create(struct gq *q, int prio, bool rocr);
int q_create_in(struct gq *q, int prio, bool rocr, void *area, size_t area_len,
		_Atomic uint64_t *sig);
int q_update(struct gq *q, int percent, int prio);
int q_destroy(struct gq *q);
int q_destroy_id(uint32_t id);
int q_outstanding(struct gq *q);
int64_t q_submit(struct gq *q, int wg, double wg_us);
int64_t q_submit_sig(struct gq *q, int wg, double wg_us, _Atomic uint64_t *sig);
int64_t q_submit_barrier(struct gq *q, uint16_t type, _Atomic uint64_t *const *deps, int n);
int q_retire(struct gq *q);
bool q_drain(struct gq *q, double timeout_us);
int test_op(int op, uint32_t qid, uint64_t *val);
int selftest(const char *name);
int maps_main(int argc, char **argv);	/* maps.c: gpload maps ... */

#endif /* GPLOAD_H */
