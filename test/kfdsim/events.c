// SPDX-License-Identifier: GPL-2.0
/*
 * events.c - KFD events on /dev/kfd, after amdkfd's kfd_events.c: the
 * CREATE_EVENT, DESTROY_EVENT, SET_EVENT, RESET_EVENT and WAIT_EVENTS
 * ioctls, the event page and the "interrupt" the command processor raises
 * when it completes a packet whose completion signal has a mailbox.
 *
 * ROCr's interrupt signals (its default: HSA_ENABLE_INTERRUPT unset) are
 * amd_signal_t's with event_mailbox_ptr = the address of their event's slot
 * in the event page and event_id = the event.  When the CP decrements such a
 * signal it writes event_id to the mailbox and interrupts; KFD's interrupt
 * handler (kfd_signal_event_interrupt()) finds the event whose slot is no
 * longer UNSIGNALED_EVENT_SLOT, acknowledges the slot and wakes its
 * waiters.  A CPU store to such a signal is followed by SET_EVENT.
 *
 * The event page: a dGPU's libhsakmt allocates it (a GTT buffer, 4096
 * slots of 8 bytes) and passes its handle with the first CREATE_EVENT;
 * without one, kfdsim allocates it and user space maps it through /dev/kfd
 * at the offset CREATE_EVENT returns (KFD_MMAP_TYPE_EVENTS).  Signal (and
 * debug) events take ids 1..4095, the index of their slot; the others ids
 * from 2^30 on, with no slot.
 *
 * Event ages (KFD 1.14+, built where the uapi header has them): each event
 * counts its signals from 1 (6.12 kfd_events.c:444, set_event() :665-669,
 * never back to 0 or 1).  A WAIT_EVENTS entry of a SIGNAL event with a
 * non-zero last_event_age is already satisfied when the event's age
 * differs (it was signalled since the caller last looked, even if it was
 * reset since), and a completed wait writes the age back to it
 * (init_event_waiter() :844-850, copy_signaled_event_data() :919-923).
 * Age 0 is the old wait, for a thunk before 1.14.
 *
 * Locks: p->ks_ev.mutex (create, destroy, page set, a waiter's setup)
 * before ev->lock (signalled state and wait queue).  The CP's interrupt
 * runs under the gpu lock, finds events under RCU and takes only ev->lock.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/idr.h>
#include <linux/mm.h>
#include <linux/rcupdate.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/wait.h>
#include <uapi/linux/kfd_ioctl.h>
#include "kfdsim.h"

#define KS_UNSIGNALED_SLOT (~0ULL)
#define KS_FIRST_NONSIGNAL_ID ((INT_MAX >> 1) + 1)	/* kfd_events.h */
#define KS_EVENT_PAGE_SIZE (KFD_SIGNAL_EVENT_LIMIT * 8)
#define KS_MMAP_TYPE_EVENTS (0x2ULL << 62)	/* kfd_priv.h */
#define KS_TIMEOUT_IMMEDIATE 0
#define KS_TIMEOUT_INFINITE 0xffffffffU
#define KS_EVENT_AGES (KFD_IOCTL_MAJOR_VERSION > 1 || KFD_IOCTL_MINOR_VERSION >= 14)

/* amd_signal_t (hsa/amd_hsa_signal.h): the mailbox and the event id */
#define KS_AMD_SIGNAL_MAILBOX 16
#define KS_AMD_SIGNAL_EVENT_ID 24

struct ks_event {
	u32 id;
	u32 type;
	bool auto_reset;
	bool signaled;
	u64 event_age;		/* signals since creation, from 1 */
	spinlock_t lock;	/* signaled, event_age, wq */
	wait_queue_head_t wq;
	struct rcu_head rcu;
};

struct ks_event_waiter {
	wait_queue_entry_t wait;
	struct ks_event *event;	/* NULL once the event is destroyed */
	bool activated;
	bool event_age_enabled;	/* the caller passed a last_event_age */
};

static bool ks_gpu_signaled_type(u32 type)
{
	return type == KFD_IOC_EVENT_SIGNAL || type == KFD_IOC_EVENT_DEBUG_EVENT;
}

/**
 * ks_events_init() - a new process's events
 * @p: process
 */
void ks_events_init(struct kfd_process *p)
{
	mutex_init(&p->ks_ev.mutex);
	idr_init(&p->ks_ev.idr);
	/* Id 0 is never an event: KFD ignores interrupts without a context id. */
	p->ks_ev.count = 1;
}

/**
 * ks_events_free() - destroy what is left of a process's events
 * @p: process, no longer used by anyone (its queues are gone)
 */
void ks_events_free(struct kfd_process *p)
{
	struct ks_event *ev;
	int id;

	idr_for_each_entry(&p->ks_ev.idr, ev, id)
		kfree(ev);	/* no waiter: no file, no ioctl */
	idr_destroy(&p->ks_ev.idr);
	if (p->ks_ev.page)
		ks_buf_put(p->ks_ev.page);
	p->ks_ev.page = NULL;
}

/* The event page: @buf (a buffer of the process's) or a new one. */
static int ks_event_page_set(struct kfd_process *p, struct ks_buf *buf)
{
	u64 *slots;

	lockdep_assert_held(&p->ks_ev.mutex);
	if (!buf)
		buf = ks_buf_alloc(KS_EVENT_PAGE_SIZE);
	if (!buf)
		return -ENOMEM;
	slots = ks_buf_kaddr(buf);
	memset(slots, 0xff, KS_EVENT_PAGE_SIZE);	/* all UNSIGNALED */
	p->ks_ev.page = buf;
	/* Pairs with the CP's READ_ONCE: the slots are initialised first. */
	smp_store_release(&p->ks_ev.slots, slots);
	return 0;
}

/* kfd_kmap_event_page(): the GTT buffer libhsakmt allocated for it. */
static int ks_event_page_from_bo(struct kfd_process *p, u64 handle)
{
	struct ks_buf *buf;
	int ret;

	if (p->ks_ev.page) {
		pr_warn_ratelimited("/dev/kfd: event page is already set\n");
		return -EINVAL;
	}
	buf = ks_kfd_bo_buf(p, handle, KS_EVENT_PAGE_SIZE);
	if (IS_ERR(buf))
		return PTR_ERR(buf);
	ret = ks_event_page_set(p, buf);
	if (ret)
		ks_buf_put(buf);
	return ret;
}

int ks_kfd_create_event(struct file *filp, struct kfd_process *p, void *data)
{
	struct kfd_ioctl_create_event_args *args = data;
	struct ks_event *ev;
	int id, ret = 0;

	ev = kzalloc(sizeof(*ev), GFP_KERNEL);
	if (!ev)
		return -ENOMEM;
	ev->type = args->event_type;
	ev->auto_reset = args->auto_reset;
	spin_lock_init(&ev->lock);
	init_waitqueue_head(&ev->wq);
	mutex_lock(&p->ks_ev.mutex);
	if (args->event_page_offset)
		ret = ks_event_page_from_bo(p, args->event_page_offset);
	args->event_page_offset = 0;
	if (ret)
		goto out;
	if (ks_gpu_signaled_type(ev->type)) {
		if (p->ks_ev.count == KFD_SIGNAL_EVENT_LIMIT) {
			ret = -ENOSPC;
			goto out;
		}
		if (!p->ks_ev.page) {
			ret = ks_event_page_set(p, NULL);
			if (ret)
				goto out;
		}
		id = idr_alloc(&p->ks_ev.idr, ev, 1, KFD_SIGNAL_EVENT_LIMIT, GFP_KERNEL);
		if (id >= 0) {
			p->ks_ev.count++;
			p->ks_ev.slots[id] = KS_UNSIGNALED_SLOT;
			args->event_page_offset = KS_MMAP_TYPE_EVENTS;
			args->event_slot_index = id;
		}
	} else {
		id = idr_alloc(&p->ks_ev.idr, ev, KS_FIRST_NONSIGNAL_ID, 0, GFP_KERNEL);
	}
	if (id < 0) {
		ret = id;
		goto out;
	}
	ev->id = id;
	ev->event_age = 1;
	args->event_id = id;
	args->event_trigger_data = id;
out:
	mutex_unlock(&p->ks_ev.mutex);
	if (ret)
		kfree(ev);
	return ret;
}

int ks_kfd_destroy_event(struct file *filp, struct kfd_process *p, void *data)
{
	struct kfd_ioctl_destroy_event_args *args = data;
	struct ks_event_waiter *w;
	struct ks_event *ev;

	mutex_lock(&p->ks_ev.mutex);
	ev = idr_find(&p->ks_ev.idr, args->event_id);
	if (!ev) {
		mutex_unlock(&p->ks_ev.mutex);
		return -EINVAL;
	}
	/* Its waiters wake up and fail. */
	spin_lock(&ev->lock);
	list_for_each_entry(w, &ev->wq.head, wait.entry)
		WRITE_ONCE(w->event, NULL);
	wake_up_all(&ev->wq);
	spin_unlock(&ev->lock);
	if (ks_gpu_signaled_type(ev->type))
		p->ks_ev.count--;
	idr_remove(&p->ks_ev.idr, ev->id);
	mutex_unlock(&p->ks_ev.mutex);
	kfree_rcu(ev, rcu);
	return 0;
}

/* set_event(): under ev->lock.  An auto-reset event wakes its waiters only. */
static void ks_event_set_locked(struct ks_event *ev)
{
	struct ks_event_waiter *w;

	/* ev->lock, which waiters hold to join the queue, makes this test safe */
	ev->signaled = !ev->auto_reset || !waitqueue_active(&ev->wq);
	if (!++ev->event_age)
		ev->event_age = 2;	/* never back to 0 (no age) or 1 (new) */
	list_for_each_entry(w, &ev->wq.head, wait.entry)
		WRITE_ONCE(w->activated, true);
	wake_up_all(&ev->wq);
}

/* SET_EVENT and RESET_EVENT: only events of type SIGNAL are the CPU's. */
static int ks_event_cpu(struct kfd_process *p, u32 id, bool set)
{
	struct ks_event *ev;
	int ret = 0;

	rcu_read_lock();
	ev = idr_find(&p->ks_ev.idr, id);
	if (ev && ev->type == KFD_IOC_EVENT_SIGNAL) {
		spin_lock(&ev->lock);
		if (set)
			ks_event_set_locked(ev);
		else
			ev->signaled = false;
		spin_unlock(&ev->lock);
	} else {
		ret = -EINVAL;
	}
	rcu_read_unlock();
	return ret;
}

int ks_kfd_set_event(struct file *filp, struct kfd_process *p, void *data)
{
	return ks_event_cpu(p, ((struct kfd_ioctl_set_event_args *)data)->event_id, true);
}

int ks_kfd_reset_event(struct file *filp, struct kfd_process *p, void *data)
{
	return ks_event_cpu(p, ((struct kfd_ioctl_reset_event_args *)data)->event_id, false);
}

/* KFD_IOC_WAIT_RESULT_*: all (or one) activated, not yet, or destroyed. */
static u32 ks_wait_result(struct ks_event_waiter *w, u32 n, bool all)
{
	u32 i, activated = 0;

	for (i = 0; i < n; i++) {
		if (!READ_ONCE(w[i].event))
			return KFD_IOC_WAIT_RESULT_FAIL;
		if (READ_ONCE(w[i].activated)) {
			if (!all)
				return KFD_IOC_WAIT_RESULT_COMPLETE;
			activated++;
		}
	}
	return activated == n ? KFD_IOC_WAIT_RESULT_COMPLETE : KFD_IOC_WAIT_RESULT_TIMEOUT;
}

static long ks_wait_jiffies(u32 ms)
{
	if (ms == KS_TIMEOUT_IMMEDIATE)
		return 0;
	if (ms == KS_TIMEOUT_INFINITE)
		return MAX_SCHEDULE_TIMEOUT;
	return msecs_to_jiffies(min_t(u32, ms, 0x7fffffff)) + 1;
}

/* free_waiters(): an interrupted wait gives back what it auto-reset. */
static void ks_waiters_free(struct ks_event_waiter *w, u32 n, bool undo_auto_reset)
{
	u32 i;

	for (i = 0; i < n; i++) {
		struct ks_event *ev = w[i].event;

		if (!ev)
			continue;
		spin_lock(&ev->lock);
		remove_wait_queue(&ev->wq, &w[i].wait);
		if (undo_auto_reset && w[i].activated && ev->auto_reset)
			ks_event_set_locked(ev);
		spin_unlock(&ev->lock);
	}
	kfree(w);
}

/*
 * copy_signaled_event_data(): the age of each activated SIGNAL event whose
 * waiter passed one.  Under p->ks_ev.mutex (no event is destroyed).
 */
static int ks_copy_event_ages(struct ks_event_waiter *w, u32 n,
			      struct kfd_event_data __user *user)
{
#if KS_EVENT_AGES
	u32 i;

	for (i = 0; i < n; i++) {
		struct ks_event *ev = w[i].event;
		u64 age;

		if (!ev)
			return -EINVAL;
		if (!w[i].activated || !w[i].event_age_enabled)
			continue;
		spin_lock(&ev->lock);
		age = ev->event_age;
		spin_unlock(&ev->lock);
		if (put_user(age, &user[i].signal_event_data.last_event_age))
			return -EFAULT;
	}
#endif
	return 0;
}

/*
 * kfd_wait_on_events(): memory and hardware-exception events never fire
 * here, so the only event data to copy back is a SIGNAL event's age.
 */
int ks_kfd_wait_events(struct file *filp, struct kfd_process *p, void *data)
{
	struct kfd_ioctl_wait_events_args *args = data;
	struct kfd_event_data __user *user = u64_to_user_ptr(args->events_ptr);
	long timeout = ks_wait_jiffies(args->timeout);
	struct ks_event_waiter *w;
	int ret = 0;
	u32 i;

	if (!args->num_events || args->num_events > KFD_SIGNAL_EVENT_LIMIT)
		return -EINVAL;
	w = kcalloc(args->num_events, sizeof(*w), GFP_KERNEL);
	if (!w)
		return -ENOMEM;
	mutex_lock(&p->ks_ev.mutex);
	for (i = 0; i < args->num_events; i++) {
		struct kfd_event_data ed;
		struct ks_event *ev;

		init_wait(&w[i].wait);
		if (copy_from_user(&ed, &user[i], sizeof(ed))) {
			ret = -EFAULT;
			break;
		}
		ev = idr_find(&p->ks_ev.idr, ed.event_id);
		if (!ev) {
			ret = -EINVAL;
			break;
		}
		spin_lock(&ev->lock);
		w[i].event = ev;
		w[i].activated = ev->signaled;
		ev->signaled = ev->signaled && !ev->auto_reset;
#if KS_EVENT_AGES
		if (ev->type == KFD_IOC_EVENT_SIGNAL && ed.signal_event_data.last_event_age) {
			w[i].event_age_enabled = true;
			if (ev->event_age != ed.signal_event_data.last_event_age)
				w[i].activated = true;
		}
#endif
		if (!w[i].activated)
			add_wait_queue(&ev->wq, &w[i].wait);
		spin_unlock(&ev->lock);
	}
	if (!ret)
		args->wait_result = ks_wait_result(w, args->num_events, args->wait_for_all);
	mutex_unlock(&p->ks_ev.mutex);

	while (!ret && args->wait_result == KFD_IOC_WAIT_RESULT_TIMEOUT && timeout > 0) {
		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			break;
		}
		if (signal_pending(current)) {
			ret = -ERESTARTSYS;
			if (args->timeout != KS_TIMEOUT_IMMEDIATE &&
			    args->timeout != KS_TIMEOUT_INFINITE)
				args->timeout = jiffies_to_msecs(max(0L, timeout - 1));
			break;
		}
		/* Sleep first, then test: a wake-up in between is not lost. */
		set_current_state(TASK_INTERRUPTIBLE);
		args->wait_result = ks_wait_result(w, args->num_events, args->wait_for_all);
		if (args->wait_result != KFD_IOC_WAIT_RESULT_TIMEOUT)
			break;
		timeout = schedule_timeout(timeout);
		args->wait_result = ks_wait_result(w, args->num_events, args->wait_for_all);
	}
	__set_current_state(TASK_RUNNING);

	mutex_lock(&p->ks_ev.mutex);
	if (!ret && args->wait_result == KFD_IOC_WAIT_RESULT_COMPLETE)
		ret = ks_copy_event_ages(w, args->num_events, user);
	ks_waiters_free(w, args->num_events, ret == -ERESTARTSYS);
	mutex_unlock(&p->ks_ev.mutex);
	if (ret)
		args->wait_result = KFD_IOC_WAIT_RESULT_FAIL;
	else if (args->wait_result == KFD_IOC_WAIT_RESULT_FAIL)
		ret = -EIO;	/* an event was destroyed while waited on */
	return ret;
}

/* set_event_from_interrupt(): acknowledge the slot, wake the waiters. */
static void ks_event_from_interrupt(struct kfd_process *p, u64 *slots, struct ks_event *ev)
{
	if (!ev || !ks_gpu_signaled_type(ev->type))
		return;
	WRITE_ONCE(slots[ev->id], KS_UNSIGNALED_SLOT);
	spin_lock(&ev->lock);
	ks_event_set_locked(ev);
	spin_unlock(&ev->lock);
	atomic64_inc(&ks_stats.event_interrupts);
}

/*
 * kfd_signal_event_interrupt(): the event @id names if its slot is
 * signalled, else (a bad id) every event whose slot is.
 */
static void ks_event_interrupt(struct kfd_process *p, u32 id)
{
	u64 *slots = READ_ONCE(p->ks_ev.slots);
	struct ks_event *ev = NULL;
	int i;

	if (!slots)
		return;
	rcu_read_lock();
	if (id < KFD_SIGNAL_EVENT_LIMIT && READ_ONCE(slots[id]) != KS_UNSIGNALED_SLOT)
		ev = idr_find(&p->ks_ev.idr, id);
	if (ev) {
		ks_event_from_interrupt(p, slots, ev);
	} else {
		idr_for_each_entry(&p->ks_ev.idr, ev, i) {
			if (i >= KFD_SIGNAL_EVENT_LIMIT)
				break;
			if (READ_ONCE(slots[i]) != KS_UNSIGNALED_SLOT)
				ks_event_from_interrupt(p, slots, ev);
		}
	}
	rcu_read_unlock();
}

/**
 * ks_event_signal_mailbox() - the CP completed a packet with signal @handle
 * @p: the queue's process
 * @handle: the completion signal (an amd_signal_t's GPU address), already
 *	decremented
 *
 * If the signal has a mailbox, write its event id there and interrupt, as
 * the CP does.  Called from the CP, in atomic context.
 */
void ks_event_signal_mailbox(struct kfd_process *p, u64 handle)
{
	u64 mailbox = 0, *slot = NULL, *sig;
	u32 id = 0;

	spin_lock(&p->ks_vm_lock);
	sig = ks_vm_kaddr_locked(p, handle + KS_AMD_SIGNAL_MAILBOX, 16);
	if (sig) {
		mailbox = READ_ONCE(sig[0]);
		id = READ_ONCE(*(u32 *)&sig[1]);
	}
	if (mailbox) {
		slot = ks_vm_kaddr_locked(p, mailbox, 8);
		if (slot)
			WRITE_ONCE(*slot, id);
	}
	spin_unlock(&p->ks_vm_lock);
	if (!mailbox)
		return;
	if (!slot)
		pr_warn_ratelimited("signal 0x%llx: event mailbox 0x%llx not mapped to the GPU\n",
				    handle, mailbox);
	ks_event_interrupt(p, id);
}

/**
 * ks_event_trap() - an SDMA trap interrupt (SOC15_INTSRC_SDMA_TRAP)
 * @p: the queue's process
 * @ctx: the TRAP packet's int_context, 28 valid bits
 *
 * kfd_signal_event_interrupt(pasid, ctx, 28): the event @ctx names if its
 * slot is signalled, else every signalled one.  The runtime has written
 * the event id into the mailbox slot (a FENCE) before.  Atomic context.
 */
void ks_event_trap(struct kfd_process *p, u32 ctx)
{
	ks_event_interrupt(p, ctx);
}

/**
 * ks_event_mmap() - kfd_event_mmap(): the event page kfdsim allocated
 * @p: process
 * @vma: the mapping, at most the page's size
 *
 * Return: 0 or a negative errno.
 */
int ks_event_mmap(struct kfd_process *p, struct vm_area_struct *vma)
{
	int ret = -EINVAL;

	if (vma->vm_end - vma->vm_start > KS_EVENT_PAGE_SIZE)
		return -EINVAL;
	mutex_lock(&p->ks_ev.mutex);
	if (p->ks_ev.page)
		ret = ks_buf_mmap(p->ks_ev.page, vma);
	mutex_unlock(&p->ks_ev.mutex);
	return ret;
}
