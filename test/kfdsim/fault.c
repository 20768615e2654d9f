// SPDX-License-Identifier: GPL-2.0
/*
 * fault.c - fault injection, for the tests of gpreempt's error paths.
 *
 * Call points (dqm->ops.update_queue, before it changes anything or after
 * update_mqd() moved the queue, evict_process_queues,
 * restore_process_queues, pqm_destroy_queue) fail with -EIO, -ETIME or
 * -EBUSY at a rate or on the Nth call from now; runlist updates can be made
 * slow; the HWS can hang after N more runlist updates; a process's mutex can
 * be held for a long time; a lookup can be delayed (a queue is destroyed and
 * recreated between gpreempt's lookup and its action) and a destroyed
 * queue's memory can be handed to the next created queue (the slab's LIFO
 * freelist, made certain).  Every injected fault is counted.  Interface:
 * README.md, "Fault injection".
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/random.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include "kfdsim.h"

struct ks_fault {
	const char *name;
	spinlock_t lock;	/* the spec below */
	int err;		/* positive errno to return */
	unsigned int rate;	/* per mille of calls */
	unsigned int nth;	/* fail the nth call from when it was set; 0: off */
	unsigned int seen;	/* calls since nth was set */
	atomic64_t calls;
	atomic64_t injected;
};

static struct ks_fault ks_faults[KS_F_NR] = {
	[KS_F_UPDATE_QUEUE] = { .name = "update_queue" },
	[KS_F_EVICT] = { .name = "evict_process_queues" },
	[KS_F_RESTORE] = { .name = "restore_process_queues" },
	[KS_F_DESTROY] = { .name = "destroy_queue" },
	[KS_F_UPDATE_MAP] = { .name = "update_queue_map" },
};

struct ks_fault_knobs ks_fault_knobs;
struct ks_fault_counts ks_fault_counts;

static char *fault_spec[KS_F_NR];
module_param_named(fault_update_queue, fault_spec[KS_F_UPDATE_QUEUE], charp, 0444);
MODULE_PARM_DESC(fault_update_queue, "Fault spec for update_queue: \"ERR RATE NTH\" (see README)");
module_param_named(fault_evict_process_queues, fault_spec[KS_F_EVICT], charp, 0444);
MODULE_PARM_DESC(fault_evict_process_queues, "Fault spec for evict_process_queues");
module_param_named(fault_restore_process_queues, fault_spec[KS_F_RESTORE], charp, 0444);
MODULE_PARM_DESC(fault_restore_process_queues, "Fault spec for restore_process_queues");
module_param_named(fault_destroy_queue, fault_spec[KS_F_DESTROY], charp, 0444);
MODULE_PARM_DESC(fault_destroy_queue, "Fault spec for pqm_destroy_queue (EBUSY: the queue stays; EIO, ETIME: freed anyway)");
module_param_named(fault_update_queue_map, fault_spec[KS_F_UPDATE_MAP], charp, 0444);
MODULE_PARM_DESC(fault_update_queue_map, "Fault spec for update_queue after update_mqd(): the queue moved, the error returns");
module_param_named(fault_slow_runlist_us, ks_fault_knobs.slow_runlist_us, uint, 0444);
MODULE_PARM_DESC(fault_slow_runlist_us, "Extra time every runlist update / MES call takes, in us [0..10000000]");
module_param_named(fault_hws_hang_after, ks_fault_knobs.hws_hang_after, uint, 0444);
MODULE_PARM_DESC(fault_hws_hang_after, "The HWS hangs after this many more runlist updates (0: never)");
module_param_named(fault_lookup_delay_us, ks_fault_knobs.lookup_delay_us, uint, 0444);
MODULE_PARM_DESC(fault_lookup_delay_us, "kfd_lookup_process_by_pasid sleeps this long after taking its reference, in us");
module_param_named(fault_unref_delay_us, ks_fault_knobs.unref_delay_us, uint, 0444);
MODULE_PARM_DESC(fault_unref_delay_us, "kfd_unref_process called from outside kfdsim sleeps this long before the put, in us");
module_param_named(fault_teardown_delay_us, ks_fault_knobs.teardown_delay_us, uint, 0444);
MODULE_PARM_DESC(fault_teardown_delay_us, "7.x layouts: a process's teardown sleeps this long between its dequeue and pqm_uninit, in us");
module_param_named(fault_update_queue_lock_delay_us, ks_fault_knobs.update_queue_lock_delay_us,
		   uint, 0444);
MODULE_PARM_DESC(fault_update_queue_lock_delay_us, "update_queue sleeps this long before it takes the dqm lock, in us");
module_param_named(fault_reuse_queue_mem, ks_fault_knobs.reuse_queue_mem, bool, 0444);
MODULE_PARM_DESC(fault_reuse_queue_mem, "The next created queue gets the memory of the last destroyed one");

static struct dentry *ks_fault_dir;
static DEFINE_SPINLOCK(ks_reuse_lock);
static struct queue *ks_reuse_q;	/* under ks_reuse_lock */

static const struct { const char *name; int err; } ks_errs[] = {
	{ "EIO", EIO }, { "ETIME", ETIME }, { "EBUSY", EBUSY },
};

static const char *ks_err_name(int err)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(ks_errs); i++)
		if (ks_errs[i].err == err)
			return ks_errs[i].name;
	return "?";
}

/* "off" | "ERR RATE NTH": ERR in EIO/ETIME/EBUSY, RATE per mille, NTH >= 0. */
static int ks_fault_parse(struct ks_fault *f, const char *buf)
{
	unsigned int rate, nth;
	char name[8];
	int i, err = 0;
	unsigned long flags;

	if (sysfs_streq(buf, "off")) {
		rate = 0;
		nth = 0;
		err = EIO;
	} else {
		if (sscanf(buf, "%7s %u %u", name, &rate, &nth) != 3 || rate > 1000)
			return -EINVAL;
		for (i = 0; i < ARRAY_SIZE(ks_errs); i++)
			if (!strcmp(name, ks_errs[i].name))
				err = ks_errs[i].err;
		if (!err)
			return -EINVAL;
	}
	spin_lock_irqsave(&f->lock, flags);
	f->err = err;
	f->rate = rate;
	f->nth = nth;
	f->seen = 0;
	spin_unlock_irqrestore(&f->lock, flags);
	return 0;
}

/**
 * ks_fault() - should this call of @fp fail?
 * @fp: the call point
 *
 * Return: 0, or the negative errno to inject (counted).
 */
int ks_fault(enum ks_fault_point fp)
{
	struct ks_fault *f = &ks_faults[fp];
	unsigned long flags;
	int ret = 0;

	atomic64_inc(&f->calls);
	spin_lock_irqsave(&f->lock, flags);
	if (f->nth && ++f->seen == f->nth) {
		f->nth = 0;
		ret = -f->err;
	} else if (f->rate && get_random_u32_below(1000) < f->rate) {
		ret = -f->err;
	}
	spin_unlock_irqrestore(&f->lock, flags);
	if (ret) {
		atomic64_inc(&f->injected);
		pr_info_ratelimited("fault: %s returns %d\n", f->name, ret);
	}
	return ret;
}

/**
 * ks_fault_runlist() - a runlist update or MES call happens: slow firmware,
 * and the HWS hang that was asked for
 *
 * Return: the extra time the update takes, in us.
 */
unsigned int ks_fault_runlist(void)
{
	unsigned int n = READ_ONCE(ks_fault_knobs.hws_hang_after);
	unsigned int slow = READ_ONCE(ks_fault_knobs.slow_runlist_us);

	if (n && cmpxchg(&ks_fault_knobs.hws_hang_after, n, n - 1) == n && n == 1) {
		WRITE_ONCE(ks_dqm.is_hws_hang, true);
		atomic64_inc(&ks_fault_counts.hws_hangs);
		pr_info("fault: the HWS hangs\n");
	}
	if (slow)
		atomic64_inc(&ks_fault_counts.slow_runlists);
	return slow;
}

/**
 * ks_fault_lookup_delay() - kfd_lookup_process_by_pasid's injected delay
 */
void ks_fault_lookup_delay(void)
{
	unsigned int us = READ_ONCE(ks_fault_knobs.lookup_delay_us);

	if (!us)
		return;
	atomic64_inc(&ks_fault_counts.lookup_delays);
	usleep_range(us, us + us / 8 + 1);
}

/**
 * ks_fault_sleep() - an injected delay that widens a race window
 * @knob_us: the knob, in us (0: off)
 * @count: its counter in fault/counts
 */
void ks_fault_sleep(const unsigned int *knob_us, atomic64_t *count)
{
	unsigned int us = READ_ONCE(*knob_us);

	if (!us)
		return;
	atomic64_inc(count);
	usleep_range(us, us + us / 8 + 1);
}

/**
 * ks_fault_unref_delay() - kfd_unref_process's injected delay
 * @caller: the return address of kfd_unref_process()
 *
 * A caller outside kfdsim (gpreempt) that may sleep is held this long
 * before its reference goes: whatever it holds besides (an mm it reads,
 * S3 F5), it holds longer.  kfdsim's own puts (some from an SRCU callback)
 * are never delayed.
 */
void ks_fault_unref_delay(unsigned long caller)
{
	unsigned int us = READ_ONCE(ks_fault_knobs.unref_delay_us);

	if (!us || within_module(caller, THIS_MODULE) || !preemptible())
		return;
	atomic64_inc(&ks_fault_counts.unref_delays);
	usleep_range(us, us + us / 8 + 1);
}

/**
 * ks_queue_alloc() - a new struct queue, zeroed; the last destroyed one
 * when fault_reuse_queue_mem is on
 *
 * Return: the queue or NULL.
 */
struct queue *ks_queue_alloc(void)
{
	struct queue *q = NULL;

	spin_lock(&ks_reuse_lock);
	if (READ_ONCE(ks_fault_knobs.reuse_queue_mem)) {
		q = ks_reuse_q;
		ks_reuse_q = NULL;
	}
	spin_unlock(&ks_reuse_lock);
	if (q) {
		memset(q, 0, sizeof(*q));
		atomic64_inc(&ks_fault_counts.queue_reuses);
		return q;
	}
	return kzalloc(sizeof(*q), GFP_KERNEL);
}

/**
 * ks_queue_free() - free a destroyed queue (or keep it for the next alloc)
 * @q: queue, off every list
 */
void ks_queue_free(struct queue *q)
{
	spin_lock(&ks_reuse_lock);
	if (READ_ONCE(ks_fault_knobs.reuse_queue_mem) && !ks_reuse_q) {
		ks_reuse_q = q;
		q = NULL;
	}
	spin_unlock(&ks_reuse_lock);
	kfree(q);
}

static ssize_t ks_fault_write(struct file *file, const char __user *ubuf, size_t len,
			      loff_t *ppos)
{
	struct ks_fault *f = file->private_data;
	char buf[32];
	int ret;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = 0;
	ret = ks_fault_parse(f, buf);
	return ret ? ret : len;
}

static ssize_t ks_fault_read(struct file *file, char __user *ubuf, size_t len, loff_t *ppos)
{
	struct ks_fault *f = file->private_data;
	char buf[160];
	int n;

	n = scnprintf(buf, sizeof(buf), "err=%s rate=%u nth=%u calls=%lld injected=%lld\n",
		      ks_err_name(f->err), f->rate, f->nth, atomic64_read(&f->calls),
		      atomic64_read(&f->injected));
	return simple_read_from_buffer(ubuf, len, ppos, buf, n);
}

static const struct file_operations ks_fault_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.read = ks_fault_read,
	.write = ks_fault_write,
	.llseek = default_llseek,
};

/* "PASID MS" written to @ubuf: the process, referenced, and MS. */
static struct kfd_process *ks_parse_pasid_ms(const char __user *ubuf, size_t len,
					     unsigned int *ms)
{
	struct kfd_process *p;
	unsigned int pasid;
	char buf[32];

	if (len >= sizeof(buf))
		return ERR_PTR(-EINVAL);
	if (copy_from_user(buf, ubuf, len))
		return ERR_PTR(-EFAULT);
	buf[len] = 0;
	if (sscanf(buf, "%u %u", &pasid, ms) != 2 || *ms > 600000)
		return ERR_PTR(-EINVAL);
	p = ks_lookup_pasid(pasid);
	return p ? p : ERR_PTR(-ESRCH);
}

/*
 * "PASID MS": hold that process's mutex for MS ms, in the writer's context,
 * or until the writer gets a signal (kill it to let go): a process whose
 * own ioctl keeps it, as a USERPTR map faulting a page of a FUSE file that
 * never answers does (REVIEW-S4 S4-1).
 */
static ssize_t ks_hold_write(struct file *file, const char __user *ubuf, size_t len,
			     loff_t *ppos)
{
	struct kfd_process *p;
	unsigned int ms;

	p = ks_parse_pasid_ms(ubuf, len, &ms);
	if (IS_ERR(p))
		return PTR_ERR(p);
	if (mutex_lock_killable(&p->mutex)) {
		kfd_unref_process(p);
		return -EINTR;
	}
	atomic64_inc(&ks_fault_counts.mutex_holds);
	msleep_interruptible(ms);
	mutex_unlock(&p->mutex);
	kfd_unref_process(p);
	return len;
}

static const struct file_operations ks_hold_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = ks_hold_write,
};

/* kernel/locking/mutex.h: set in mutex::owner while a task waits (since 4.10). */
#define KS_MUTEX_FLAG_WAITERS 0x01UL

static bool ks_mutex_has_waiters(struct mutex *m)
{
	return atomic_long_read(&m->owner) & KS_MUTEX_FLAG_WAITERS;
}

static int ks_hammer_fn(void *arg)
{
	struct kfd_process *p = arg;

	mutex_lock(&p->mutex);
	while (!kthread_should_stop()) {
		usleep_range(200, 250);
		atomic64_inc(&ks_fault_counts.mutex_hammers);
		if (!ks_mutex_has_waiters(&p->mutex))
			continue;
		/* Someone waits: the unlock wakes it, then hands over to it. */
		mutex_unlock(&p->mutex);
		mutex_lock(&p->mutex);
	}
	mutex_unlock(&p->mutex);
	return 0;
}

/*
 * "PASID MS": for MS ms a thread holds that process's mutex and lets it go
 * only to a waiter: it is never free for a mutex_trylock(), as a process
 * whose threads loop on ioctls that take it keeps it owned at nearly every
 * instant (REVIEW-S3 F20).  A waiter gets it by the mutex's hand-off within
 * two ~200 us turns.  In the writer's context: the write returns when the
 * thread stops (after MS ms, or on a signal).
 */
static ssize_t ks_hammer_write(struct file *file, const char __user *ubuf, size_t len,
			       loff_t *ppos)
{
	struct task_struct *t;
	struct kfd_process *p;
	unsigned int ms;

	p = ks_parse_pasid_ms(ubuf, len, &ms);
	if (IS_ERR(p))
		return PTR_ERR(p);
	t = kthread_run(ks_hammer_fn, p, "kfdsim-hammer/%u", p->pasid);
	if (IS_ERR(t)) {
		kfd_unref_process(p);
		return PTR_ERR(t);
	}
	msleep_interruptible(ms);
	kthread_stop(t);
	kfd_unref_process(p);
	return len;
}

static const struct file_operations ks_hammer_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = ks_hammer_write,
};

static int ks_fault_counts_show(struct seq_file *m, void *unused)
{
	int i;

	for (i = 0; i < KS_F_NR; i++)
		seq_printf(m, "%s %lld\n", ks_faults[i].name,
			   atomic64_read(&ks_faults[i].injected));
	seq_printf(m, "hws_hangs %lld\nslow_runlists %lld\nmutex_holds %lld\nlookup_delays %lld\nqueue_reuses %lld\nlookup_fails %lld\n",
		   atomic64_read(&ks_fault_counts.hws_hangs),
		   atomic64_read(&ks_fault_counts.slow_runlists),
		   atomic64_read(&ks_fault_counts.mutex_holds),
		   atomic64_read(&ks_fault_counts.lookup_delays),
		   atomic64_read(&ks_fault_counts.queue_reuses),
		   atomic64_read(&ks_fault_counts.lookup_fails));
	seq_printf(m, "unref_delays %lld\nmutex_hammers %lld\n",
		   atomic64_read(&ks_fault_counts.unref_delays),
		   atomic64_read(&ks_fault_counts.mutex_hammers));
	seq_printf(m, "teardown_delays %lld\nupdate_queue_lock_delays %lld\n",
		   atomic64_read(&ks_fault_counts.teardown_delays),
		   atomic64_read(&ks_fault_counts.update_queue_lock_delays));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(ks_fault_counts);

/**
 * ks_fault_init() - parse the fault_* parameters
 *
 * Return: 0, or -EINVAL naming the bad parameter.
 */
int ks_fault_init(void)
{
	int i;

	for (i = 0; i < KS_F_NR; i++) {
		spin_lock_init(&ks_faults[i].lock);
		ks_faults[i].err = EIO;
		if (fault_spec[i] && ks_fault_parse(&ks_faults[i], fault_spec[i])) {
			pr_err("fault_%s=\"%s\": expected \"off\" or \"EIO|ETIME|EBUSY RATE NTH\"\n",
			       ks_faults[i].name, fault_spec[i]);
			return -EINVAL;
		}
	}
	if (ks_fault_knobs.slow_runlist_us > 10000000) {
		pr_err("fault_slow_runlist_us=%u out of range 0..10000000\n",
		       ks_fault_knobs.slow_runlist_us);
		return -EINVAL;
	}
	return 0;
}

/**
 * ks_fault_debugfs() - the fault/ directory
 * @parent: kfdsim's debugfs directory
 */
void ks_fault_debugfs(struct dentry *parent)
{
	int i;

	ks_fault_dir = debugfs_create_dir("fault", parent);
	for (i = 0; i < KS_F_NR; i++)
		debugfs_create_file(ks_faults[i].name, 0600, ks_fault_dir, &ks_faults[i],
				    &ks_fault_fops);
	debugfs_create_u32("slow_runlist_us", 0600, ks_fault_dir,
			   &ks_fault_knobs.slow_runlist_us);
	debugfs_create_u32("hws_hang_after", 0600, ks_fault_dir, &ks_fault_knobs.hws_hang_after);
	debugfs_create_bool("hws_hang", 0600, ks_fault_dir, &ks_dqm.is_hws_hang);
	debugfs_create_u32("lookup_delay_us", 0600, ks_fault_dir,
			   &ks_fault_knobs.lookup_delay_us);
	debugfs_create_u32("unref_delay_us", 0600, ks_fault_dir,
			   &ks_fault_knobs.unref_delay_us);
	debugfs_create_u32("teardown_delay_us", 0600, ks_fault_dir,
			   &ks_fault_knobs.teardown_delay_us);
	debugfs_create_u32("update_queue_lock_delay_us", 0600, ks_fault_dir,
			   &ks_fault_knobs.update_queue_lock_delay_us);
	debugfs_create_u32("lookup_fail_pasid", 0600, ks_fault_dir,
			   &ks_fault_knobs.lookup_fail_pasid);
	debugfs_create_bool("reuse_queue_mem", 0600, ks_fault_dir,
			    &ks_fault_knobs.reuse_queue_mem);
	debugfs_create_file("hold_mutex", 0200, ks_fault_dir, NULL, &ks_hold_fops);
	debugfs_create_file("hammer_mutex", 0200, ks_fault_dir, NULL, &ks_hammer_fops);
#if GP_HAVE_kfd_dbg_trap_disable && GP_HAVE_queue_properties__is_suspended
	debugfs_create_file("debugger", 0200, ks_fault_dir, NULL, &ks_dbg_fops);
#endif
	debugfs_create_file("counts", 0444, ks_fault_dir, NULL, &ks_fault_counts_fops);
}

/**
 * ks_fault_exit() - free the kept queue memory
 */
void ks_fault_exit(void)
{
	kfree(ks_reuse_q);
	ks_reuse_q = NULL;
}
