// SPDX-License-Identifier: GPL-2.0
/*
 * layout_live.c - check the built-in KFD layout against live KFD objects
 * (issue 21).
 *
 * layout_check.c proves the layout from the provider's BTF, or, without
 * BTF, only by its build id: a build id says "the binary the layout was made
 * from", not "the layout is right".  A layout generated from a ROCm DKMS
 * source tree without the config.h of its build puts struct kfd_process's
 * pdds, n_pdds and pqm 16 bytes too far, and the build id of the amdgpu.ko
 * built from that tree still matches.  So before gpreempt acts on anything,
 * it reads live KFD objects through the layout it was built with and checks
 * what KFD itself guarantees:
 *  - a process found by PASID carries that PASID (its own, or a pdd's);
 *  - p->pqm.process == p;
 *  - n_pdds fits pdds[], and each pdd has pdd->process == p,
 *    pdd->qpd.pqm == &p->pqm and a device;
 *  - p->pqm.queues is a well-formed list (next->prev links back), of at
 *    most KFD's per-process queue limit;
 *  - each of its queues has q->process == p, a device that one of p's pdds
 *    has, and queue_properties in KFD's ranges (type, format, queue id,
 *    priority, percentage).
 * Every read goes through copy_from_kernel_nofault(): with a wrong layout
 * the pointers read are garbage, and a check must never fault on them.
 *
 * At insmod every live KFD process is checked (gp_layout_live_process(),
 * from the registry's walk of existing processes), under KFD's own SRCU
 * lookup and reference, with p->mutex held for the queue list once the
 * process itself passed; any mismatch refuses insmod with
 * one line that names the field.  With no KFD process yet, the first queue
 * the creation probe reports is checked before the registry takes it
 * (gp_layout_live_admit()); a mismatch there disarms gpreempt for good:
 * no queue is ever registered, so none is ever parked.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ktime.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/uaccess.h>
#include "kfd/layout_check.h"
#include "kfd/kfd.h"

#define GP_LIVE_MAX_QUEUES 1024	/* KFD_MAX_NUM_OF_QUEUES_PER_PROCESS */
#define GP_LIVE_MAX_PRIORITY 15	/* KFD_MAX_QUEUE_PRIORITY */
#define GP_LIVE_MAX_PERCENT 100	/* KFD_MAX_QUEUE_PERCENTAGE */
#define GP_LIVE_MAX_QTYPE 15	/* enum kfd_queue_type: 0..5 in 7.3 */
#define GP_LIVE_MAX_PDDS (GP_SZ_kfd_process__pdds / sizeof(void *))

enum gp_live_state { GP_LIVE_UNKNOWN, GP_LIVE_OK, GP_LIVE_FAILED };
static atomic_t gp_live_state = ATOMIC_INIT(GP_LIVE_UNKNOWN);

/* One mismatch, for the one line that names it. */
struct gp_live_why {
	char msg[160];
};

/* Read @size bytes at @base + @off without faulting; false if unmapped. */
static bool gp_peek(void *dst, const void *base, size_t off, size_t size)
{
	return !copy_from_kernel_nofault(dst, (const char *)base + off, size);
}

#define GP_PEEK(dst, base, off) gp_peek(&(dst), (base), (off), sizeof(dst))

static int gp_live_err(struct gp_live_why *why, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why->msg, sizeof(why->msg), fmt, ap);
	va_end(ap);
	return -ENOEXEC;
}

/* The process devices of @p, checked; their number into @ndevs. */
static int gp_live_pdds(struct kfd_process *p, u32 pasid, u32 *ndevs, struct gp_live_why *why)
{
	void *pqm = (char *)p + GP_OFF_kfd_process__pqm;
	bool pasid_seen = false;
	u32 n, i;

	if (!GP_PEEK(n, p, GP_OFF_kfd_process__n_pdds))
		return gp_live_err(why, "kfd_process.n_pdds unreadable");
	if (n > GP_LIVE_MAX_PDDS)
		return gp_live_err(why, "kfd_process.n_pdds is %u, more than pdds[%zu]",
				   n, GP_LIVE_MAX_PDDS);
	for (i = 0; i < n; i++) {
		void *pdd, *back, *qpd_pqm, *dev;

		if (!GP_PEEK(pdd, p, GP_OFF_kfd_process__pdds + i * sizeof(void *)) || !pdd)
			return gp_live_err(why, "kfd_process.pdds[%u] is NULL below n_pdds %u",
					   i, n);
		if (!GP_PEEK(back, pdd, GP_OFF_kfd_process_device__process) || back != p)
			return gp_live_err(why,
					   "kfd_process.pdds[%u]->process is not the process (kfd_process.pdds or kfd_process_device.process)",
					   i);
		if (!GP_PEEK(qpd_pqm, pdd, GP_OFF_kfd_process_device__qpd +
			     GP_OFF_qcm_process_device__pqm) || qpd_pqm != pqm)
			return gp_live_err(why,
					   "kfd_process.pdds[%u]->qpd.pqm is not &kfd_process.pqm",
					   i);
		if (!GP_PEEK(dev, pdd, GP_OFF_kfd_process_device__dev) || !dev)
			return gp_live_err(why, "kfd_process.pdds[%u]->dev is NULL", i);
		if (GP_PASID_IN_PDD && pasid) {
			u32 v;

			if (GP_PEEK(v, pdd, GP_OFF_PASID) && v == pasid)
				pasid_seen = true;
		}
	}
	*ndevs = n;
	if (GP_PASID_IN_PDD && pasid && !pasid_seen)
		return gp_live_err(why,
				   "no kfd_process.pdds[]->pasid is %u, the PASID it was found by",
				   pasid);
	return 0;
}

/*
 * What can be checked of @p without its mutex.  @pasid: the PASID it was
 * found by, or 0 (found through a queue).
 */
static int gp_live_process(struct kfd_process *p, u32 pasid, u32 *ndevs,
			   struct gp_live_why *why)
{
	void *back;

	if (!GP_PASID_IN_PDD && pasid) {
		u32 v;

		if (!GP_PEEK(v, p, GP_OFF_PASID) || v != pasid)
			return gp_live_err(why,
					   "kfd_process.pasid of the process found by PASID %u is %u",
					   pasid, v);
	}
	if (!GP_PEEK(back, p, GP_OFF_kfd_process__pqm + GP_OFF_process_queue_manager__process) ||
	    back != p)
		return gp_live_err(why,
				   "kfd_process.pqm.process is not the process (kfd_process.pqm or process_queue_manager.process)");
	return gp_live_pdds(p, pasid, ndevs, why);
}

/* Is @dev the device of one of @p's first @ndevs (checked) pdds? */
static bool gp_live_has_dev(struct kfd_process *p, u32 ndevs, void *dev)
{
	u32 i;

	for (i = 0; i < ndevs; i++) {
		void *pdd, *d;

		if (GP_PEEK(pdd, p, GP_OFF_kfd_process__pdds + i * sizeof(void *)) &&
		    GP_PEEK(d, pdd, GP_OFF_kfd_process_device__dev) && d == dev)
			return true;
	}
	return false;
}

/* One queue of @p, which has @ndevs checked pdds. */
static int gp_live_queue(struct kfd_process *p, void *q, u32 ndevs, struct gp_live_why *why)
{
	const size_t props = GP_OFF_queue__properties;
	u32 type, format, qid, prio, pct;
	void *back, *dev;

	if (!GP_PEEK(back, q, GP_OFF_queue__process) || back != p)
		return gp_live_err(why,
				   "queue.process is not the process whose queue list holds it");
	if (!GP_PEEK(dev, q, GP_OFF_queue__device))
		return gp_live_err(why, "queue.device unreadable");
	if (!gp_live_has_dev(p, ndevs, dev))
		return gp_live_err(why, "queue.device is none of kfd_process.pdds[0..%u)->dev",
				   ndevs);
	if (!GP_PEEK(type, q, props + GP_OFF_queue_properties__type) ||
	    !GP_PEEK(format, q, props + GP_OFF_queue_properties__format) ||
	    !GP_PEEK(qid, q, props + GP_OFF_queue_properties__queue_id) ||
	    !GP_PEEK(prio, q, props + GP_OFF_queue_properties__priority) ||
	    !GP_PEEK(pct, q, props + GP_OFF_queue_properties__queue_percent))
		return gp_live_err(why, "queue.properties unreadable");
	if (type > GP_LIVE_MAX_QTYPE)
		return gp_live_err(why, "queue_properties.type is %u", type);
	if (format > GP_ENUM_KFD_QUEUE_FORMAT_AQL)
		return gp_live_err(why, "queue_properties.format is %u", format);
	if (qid >= GP_LIVE_MAX_QUEUES)
		return gp_live_err(why, "queue_properties.queue_id is %u", qid);
	if (prio > GP_LIVE_MAX_PRIORITY)
		return gp_live_err(why, "queue_properties.priority is %u", prio);
	if (pct > GP_LIVE_MAX_PERCENT)
		return gp_live_err(why, "queue_properties.queue_percent is %u", pct);
	return 0;
}

/*
 * p->pqm.queues and every queue on it; @nq counts the queues.  The list is
 * stable under p->mutex (insmod) or in the creating ioctl, which holds it
 * (the probe); a bounded walk, every link read without faulting.
 */
static int gp_live_queues(struct kfd_process *p, u32 ndevs, unsigned int *nq,
			  struct gp_live_why *why)
{
	struct list_head *head = (struct list_head *)((char *)p + GP_OFF_kfd_process__pqm +
						      GP_OFF_process_queue_manager__queues);
	struct list_head *pos = head, *next, *prev;
	unsigned int n = 0;
	void *q;
	int ret;

	for (;;) {
		if (!GP_PEEK(next, pos, offsetof(struct list_head, next)) || !next ||
		    !GP_PEEK(prev, next, offsetof(struct list_head, prev)) || prev != pos)
			return gp_live_err(why,
					   "kfd_process.pqm.queues is not a well-formed list (process_queue_manager.queues or process_queue_node.process_queue_list)");
		if (next == head)
			break;
		if (++n > GP_LIVE_MAX_QUEUES)
			return gp_live_err(why, "kfd_process.pqm.queues has more than %u entries",
					   GP_LIVE_MAX_QUEUES);
		pos = next;
		if (!GP_PEEK(q, (char *)pos - GP_OFF_process_queue_node__process_queue_list,
			     GP_OFF_process_queue_node__q))
			return gp_live_err(why, "process_queue_node.q unreadable");
		if (!q)
			continue;	/* a kernel queue (DIQ) */
		ret = gp_live_queue(p, q, ndevs, why);
		if (ret)
			return ret;
	}
	*nq += n;
	return 0;
}

/**
 * gp_layout_live_process() - check one live KFD process and its queues
 * @p: a process found by PASID, with a KFD reference held
 * @pasid: the PASID it was found by
 * @nq: its queues are added here
 * @deadline: the longest wait for its p->mutex (jiffies)
 *
 * Called for every process at insmod (gp_registry_walk_existing()), before
 * gpreempt acts on anything.  Checks the process without its lock first, and
 * its queue list under p->mutex only once the process itself passed: a wrong
 * layout must not make gpreempt lock a "mutex" at a wrong offset.  A mutex
 * still busy at @deadline (a process that holds its own) leaves its
 * queues unchecked.  Sleeps.
 *
 * Return: 0, -EBUSY (its queues not checked: the caller skips the
 * process), or -ENOEXEC after one line that names the field.
 */
int gp_layout_live_process(struct kfd_process *p, u32 pasid, unsigned int *nq,
			   unsigned long deadline)
{
	struct gp_live_why why;
	u32 ndevs;
	int ret;

	ret = gp_live_process(p, pasid, &ndevs, &why);
	if (!ret) {
		if (gp_kfd_lock_until(p, deadline))
			return -EBUSY;
		ret = gp_live_queues(p, ndevs, nq, &why);
		mutex_unlock(kfd_p_mutex(p));
	}
	if (ret) {
		atomic_set(&gp_live_state, GP_LIVE_FAILED);
		pr_err("live KFD objects do not match the layout gpreempt was built for (from %s): %s (PASID %u); rebuild gpreempt against this amdgpu\n",
		       GP_LAYOUT_FROM, why.msg, pasid);
	}
	return ret;
}

/**
 * gp_layout_live_queues_locked() - check a live process's queues, p->mutex held
 * @p: a process found by PASID, with a KFD reference held, that passed
 *     gp_layout_live_process() but whose mutex was busy then (-EBUSY)
 * @pasid: the PASID it was found by
 * @nq: its queues are added here
 *
 * The adoption of a process insmod skipped: the caller waited for its
 * p->mutex (a waiter, never a try) and holds it.
 *
 * Return: 0, or -ENOEXEC after one line that names the field.
 */
int gp_layout_live_queues_locked(struct kfd_process *p, u32 pasid, unsigned int *nq)
{
	struct gp_live_why why;
	u32 ndevs;
	int ret;

	ret = gp_live_process(p, pasid, &ndevs, &why);
	if (!ret)
		ret = gp_live_queues(p, ndevs, nq, &why);
	if (ret) {
		atomic_set(&gp_live_state, GP_LIVE_FAILED);
		pr_err("live KFD objects do not match the layout gpreempt was built for (from %s): %s (PASID %u); rebuild gpreempt against this amdgpu\n",
		       GP_LAYOUT_FROM, why.msg, pasid);
	}
	return ret;
}

/**
 * gp_layout_live_passed() - every live KFD process passed (insmod)
 * @nproc: processes checked
 * @nq: their queues
 * @t0: when the walk started
 *
 * With no process, the first queue is checked when it comes
 * (gp_layout_live_admit()).
 */
void gp_layout_live_passed(unsigned int nproc, unsigned int nq, ktime_t t0)
{
	if (!nproc) {
		pr_info("live layout check: no KFD process yet; the first queue is checked before gpreempt acts on it\n");
		return;
	}
	atomic_cmpxchg(&gp_live_state, GP_LIVE_UNKNOWN, GP_LIVE_OK);
	pr_info("live layout check: %u KFD process(es), %u queue(s) match the layout, in %lld us\n",
		nproc, nq, ktime_us_delta(ktime_get(), t0));
}

/**
 * gp_layout_live_admit() - may the registry take @q? (creation probe)
 * @q: a queue KFD has just created; its process's mutex is held by the
 *	creating ioctl
 *
 * The first queue after an insmod that found no KFD process is checked, with
 * its process, as gp_layout_live_check() checks them; a mismatch disarms
 * gpreempt for good (one line naming the field).  Atomic context.
 *
 * Return: true if the layout is proven, false if it is wrong.
 */
bool gp_layout_live_admit(struct queue *q)
{
	struct kfd_process *p;
	unsigned int nq = 0;
	struct gp_live_why why;
	u32 ndevs;
	int ret, state = atomic_read(&gp_live_state);

	if (state != GP_LIVE_UNKNOWN)
		return state == GP_LIVE_OK;
	if (!GP_PEEK(p, q, GP_OFF_queue__process) || !p)
		ret = gp_live_err(&why, "queue.process unreadable or NULL");
	else
		ret = gp_live_process(p, 0, &ndevs, &why);
	if (!ret)
		ret = gp_live_queue(p, q, ndevs, &why);
	if (!ret)
		ret = gp_live_queues(p, ndevs, &nq, &why);
	state = ret ? GP_LIVE_FAILED : GP_LIVE_OK;
	if (atomic_cmpxchg(&gp_live_state, GP_LIVE_UNKNOWN, state) != GP_LIVE_UNKNOWN)
		return atomic_read(&gp_live_state) == GP_LIVE_OK;
	if (ret)
		pr_err("live KFD objects do not match the layout gpreempt was built for (from %s): %s (first queue); gpreempt is disarmed, rebuild it against this amdgpu\n",
		       GP_LAYOUT_FROM, why.msg);
	else
		pr_info("live layout check: the first queue and its process match the layout\n");
	return !ret;
}
