// SPDX-License-Identifier: GPL-2.0
/*
 * chardev.c - /dev/kfdsim, after amdkfd's kfd_chardev.c: open creates the
 * process, ioctls create/destroy/update queues under p->mutex with the
 * argument checks of kfd_ioctl_create_queue()/kfd_ioctl_update_queue(),
 * plus test hooks (evict/restore, debugger attach, reset flag, state query).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/log2.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include "kfdsim.h"

static int ks_open(struct inode *inode, struct file *filp)
{
	struct kfd_process *p;
	int ret = ks_process_create(&p);

	if (ret)
		return ret;
	filp->private_data = p;
	return 0;
}

static int ks_release(struct inode *inode, struct file *filp)
{
	ks_process_file_release(filp->private_data);
	return 0;
}

static bool ks_user_range_ok(u64 addr, u64 len)
{
	return addr && access_ok((void __user *)addr, len);
}

/* The checks kfd_ioctl_create_queue() and kfd_ioctl_update_queue() share. */
static int ks_check_percent_priority(u32 percentage, u32 priority)
{
	/* As KFD: bits 8-15 carry pm4_target_xcc, bits 0-7 the percentage. */
	if ((percentage & 0xff) > KFDSIM_MAX_QUEUE_PERCENTAGE) {
		pr_err_ratelimited("queue percentage must be between 0 and %d\n",
				   KFDSIM_MAX_QUEUE_PERCENTAGE);
		return -EINVAL;
	}
	if (priority > KFDSIM_MAX_QUEUE_PRIORITY) {
		pr_err_ratelimited("queue priority must be between 0 and %d\n",
				   KFDSIM_MAX_QUEUE_PRIORITY);
		return -EINVAL;
	}
	return 0;
}

/**
 * ks_queue_create() - create a user queue, for /dev/kfdsim and /dev/kfd
 * @p: process (p->mutex not held)
 * @filp: the file the ioctl came on
 * @dev: kfdsim device index
 * @type: KFDSIM_QUEUE_TYPE_*
 * @ring: ring address
 * @ring_size: bytes
 * @rptr: read index address
 * @wptr: write index address
 * @sig: signal area address, or 0
 * @sig_size: signal area bytes, or 0
 * @percentage: queue percentage (bits 0-7; 8-15: pm4_target_xcc)
 * @priority: 0..15
 * @aql: the ring holds the real packets (/dev/kfd: AQL, or SDMA v4 for an SDMA
 *	queue), not struct kfdsim_packet
 * @qid: the new queue's id
 *
 * The argument checks of kfd_ioctl_create_queue(), then pqm_create_queue().
 *
 * Return: 0 or a negative errno.
 */
int ks_queue_create(struct kfd_process *p, struct file *filp, unsigned int dev, u32 type,
		    u64 ring, u32 ring_size, u64 rptr, u64 wptr, u64 sig, u32 sig_size,
		    u32 percentage, u32 priority, bool aql, unsigned int *qid)
{
	struct queue *q;
	int ret;

	ret = ks_check_percent_priority(percentage, priority);
	if (ret)
		return ret;
	if (type != KFDSIM_QUEUE_TYPE_COMPUTE_AQL && type != KFDSIM_QUEUE_TYPE_SDMA &&
	    type != KFDSIM_QUEUE_TYPE_COMPUTE_PM4) {
		pr_err_ratelimited("unsupported queue type %u\n", type);
		return -EINVAL;
	}
	if (!is_power_of_2(ring_size) || ring_size < KFDSIM_MIN_RING_SIZE ||
	    ring_size > KFDSIM_MAX_RING_SIZE) {
		pr_err_ratelimited("ring size must be a power of 2 in %d..%d\n",
				   KFDSIM_MIN_RING_SIZE, KFDSIM_MAX_RING_SIZE);
		return -EINVAL;
	}
	if ((rptr | wptr | sig | sig_size) & 7 || sig_size > KFDSIM_MAX_SIGNAL_SIZE) {
		pr_err_ratelimited("pointers and signal area must be 8-byte aligned\n");
		return -EINVAL;
	}
	if (!ks_user_range_ok(ring, ring_size) || !ks_user_range_ok(rptr, 8) ||
	    !ks_user_range_ok(wptr, 8) || (sig_size && !ks_user_range_ok(sig, sig_size))) {
		pr_err_ratelimited("can't access ring, pointers or signals\n");
		return -EFAULT;
	}
	if (dev >= ks_param.ndev) {
		pr_err_ratelimited("no device %u\n", dev);
		return -EINVAL;
	}
	q = ks_queue_alloc();
	if (!q)
		return -ENOMEM;
	ret = ks_queue_pin(q, ring, ring_size, rptr, wptr, sig, sig_size);
	if (ret) {
		pr_err_ratelimited("can't pin the queue's memory: %d\n", ret);
		ks_queue_free(q);
		return ret;
	}
	if (type == KFDSIM_QUEUE_TYPE_SDMA) {
		q->properties.type = KFD_QUEUE_TYPE_SDMA;
		q->properties.format = KS_QUEUE_FORMAT_PM4;
	} else {
		q->properties.type = GP_ENUM_KFD_QUEUE_TYPE_COMPUTE;
		q->properties.format = type == KFDSIM_QUEUE_TYPE_COMPUTE_PM4 ?
				       KS_QUEUE_FORMAT_PM4 : GP_ENUM_KFD_QUEUE_FORMAT_AQL;
	}
	q->ks.aql = aql && type == KFDSIM_QUEUE_TYPE_COMPUTE_AQL;
	q->ks.sdma4 = aql && type == KFDSIM_QUEUE_TYPE_SDMA;
	q->properties.queue_address = ring;
	q->properties.queue_size = ring_size;
	q->properties.queue_percent = percentage & 0xff;
	q->properties.priority = priority;
	q->properties.read_ptr = (void __user *)rptr;
	q->properties.write_ptr = (void __user *)wptr;

	mutex_lock(&p->mutex);
	/* /dev/kfdsim has no ACQUIRE_VM: the first queue acquires the device. */
	ret = ks_pdd_bind(p->pdds[dev]);
	if (!ret)
		ret = ks_pqm_create_queue(&p->pqm, &ks_devs[dev].node, filp, &q->properties,
					  qid);
	mutex_unlock(&p->mutex);
	if (ret) {
		ks_queue_unpin(q);
		ks_queue_free(q);
	}
	return ret;
}

static int ks_create_queue(struct kfd_process *p, struct file *filp, void __user *arg)
{
	struct kfdsim_create_queue_args args;
	unsigned int qid;
	int ret;

	if (copy_from_user(&args, arg, sizeof(args)))
		return -EFAULT;
	/* A non-zero pad is refused where an unknown gpu_id is. */
	ret = ks_queue_create(p, filp, args.pad ? UINT_MAX : args.gpu_id, args.queue_type,
			      args.ring_base_address, args.ring_size, args.read_pointer_address,
			      args.write_pointer_address, args.signal_base_address,
			      args.signal_size, args.queue_percentage, args.queue_priority, false,
			      &qid);
	if (ret)
		return ret;
	args.queue_id = qid;
	return copy_to_user(arg, &args, sizeof(args)) ? -EFAULT : 0;
}

static int ks_destroy_queue(struct kfd_process *p, void __user *arg)
{
	struct kfdsim_destroy_queue_args args;
	int ret;

	if (copy_from_user(&args, arg, sizeof(args)))
		return -EFAULT;
	mutex_lock(&p->mutex);
	ret = pqm_destroy_queue(&p->pqm, args.queue_id);
	mutex_unlock(&p->mutex);
	return ret;
}

/**
 * ks_queue_update() - the update ioctl, for /dev/kfdsim and /dev/kfd
 * @p: process (p->mutex not held)
 * @qid: queue id
 * @ring: ring address, or 0
 * @ring_size: bytes, or 0
 * @percentage: queue percentage
 * @priority: 0..15
 *
 * The argument checks of kfd_ioctl_update_queue(), then
 * pqm_update_queue_properties().
 *
 * Return: 0 or a negative errno.
 */
int ks_queue_update(struct kfd_process *p, unsigned int qid, u64 ring, u32 ring_size,
		    u32 percentage, u32 priority)
{
	struct queue_properties props = {};
	int ret;

	ret = ks_check_percent_priority(percentage, priority);
	if (ret)
		return ret;
	if (ring && !access_ok((void __user *)ring, ring_size)) {
		pr_err_ratelimited("can't access ring base address\n");
		return -EFAULT;
	}
	if (!is_power_of_2(ring_size) && ring_size) {
		pr_err_ratelimited("ring size must be a power of 2 or 0\n");
		return -EINVAL;
	}
	props.queue_address = ring;
	props.queue_size = ring_size;
	props.queue_percent = percentage & 0xff;
	props.priority = priority;
	mutex_lock(&p->mutex);
	ret = pqm_update_queue_properties(&p->pqm, qid, &props);
	mutex_unlock(&p->mutex);
	return ret;
}

static int ks_update_queue(struct kfd_process *p, void __user *arg)
{
	struct kfdsim_update_queue_args args;

	if (copy_from_user(&args, arg, sizeof(args)))
		return -EFAULT;
	return ks_queue_update(p, args.queue_id, args.ring_base_address, args.ring_size,
			       args.queue_percentage, args.queue_priority);
}

static int ks_set_cu_mask(struct kfd_process *p, void __user *arg)
{
	struct kfdsim_set_cu_mask_args args;

	if (copy_from_user(&args, arg, sizeof(args)))
		return -EFAULT;
	return ks_queue_set_cu_mask(p, args.queue_id, args.num_cu_mask, args.cu_mask_ptr);
}

/* Work on the CPU for @us microseconds (the caller holds p->mutex). */
static void ks_busy_us(u64 us)
{
	u64 end = ktime_get_ns() + us * NSEC_PER_USEC;

	while (ktime_get_ns() < end)
		cpu_relax();
}

static int ks_test(struct kfd_process *p, void __user *arg)
{
	struct device_queue_manager *dqm;
	struct kfdsim_test_args args;
	struct queue *q;
	int ret = 0;

	if (copy_from_user(&args, arg, sizeof(args)))
		return -EFAULT;
	/* The device-wide ops name their device in queue_id. */
	if ((args.op == KFDSIM_TEST_SET_RESET || args.op == KFDSIM_TEST_HWS_HANG) &&
	    args.queue_id >= ks_param.ndev)
		return -EINVAL;
	switch (args.op) {
	case KFDSIM_TEST_EVICT:
		ret = ks_test_evict(p);
		break;
	case KFDSIM_TEST_RESTORE:
		ret = ks_test_restore(p);
		break;
	case KFDSIM_TEST_DBG_ENABLE:
		mutex_lock(&p->mutex);
		ret = ks_dbg_enable(p, args.value);
		mutex_unlock(&p->mutex);
		break;
	case KFDSIM_TEST_DBG_FLIP:
		mutex_lock(&p->mutex);
		ret = ks_dbg_flip(p);
		mutex_unlock(&p->mutex);
		break;
	case KFDSIM_TEST_SET_RESET:
		WRITE_ONCE(p->pdds[args.queue_id]->has_reset_queue, true);
		break;
	case KFDSIM_TEST_RESET_QUEUE:
		ret = ks_test_reset_queue(p, args.queue_id);
		break;
	case KFDSIM_TEST_QUERY:
		mutex_lock(&p->mutex);
		q = pqm_get_user_queue(&p->pqm, args.queue_id);
		if (q)
			args.value = (q->properties.is_active ? KFDSIM_Q_ACTIVE : 0) |
				     (q->properties.is_evicted ? KFDSIM_Q_EVICTED : 0) |
				     (KS_SUSPENDED(q->properties) ? KFDSIM_Q_SUSPENDED : 0);
		else
			ret = -EINVAL;
		mutex_unlock(&p->mutex);
		break;
	case KFDSIM_TEST_PASID:
		args.value = p->pasid;
		break;
	case KFDSIM_TEST_HWS_HANG:
		dqm = &ks_devs[args.queue_id].dqm;
		mutex_lock(&dqm->lock);
		WRITE_ONCE(dqm->is_hws_hang, !!args.value);
		mutex_unlock(&dqm->lock);
		break;
	case KFDSIM_TEST_HOLD_REF:
		ret = ks_test_hold(p, args.value);
		break;
	case KFDSIM_TEST_MUTEX_WORK:
		if (args.value > 10000)
			return -EINVAL;
		mutex_lock(&p->mutex);
		ks_busy_us(args.value);
		mutex_unlock(&p->mutex);
		break;
	case KFDSIM_TEST_CONTEXT:
#if GP_HAVE_kfd_process__context_id
		args.value = p->context_id;
#else
		args.value = KS_CONTEXT_ID_PRIMARY;
#endif
		break;
	default:
		return -EINVAL;
	}
	if (!ret && copy_to_user(arg, &args, sizeof(args)))
		ret = -EFAULT;
	return ret;
}

static long ks_ioctl(struct file *filp, unsigned int cmd, unsigned long arg)
{
	struct kfd_process *p = filp->private_data;
	void __user *uarg = (void __user *)arg;

	/* As KFD: only the process that opened the file may use it. */
	if (p->lead_thread != current->group_leader)
		return -EBADF;
	switch (cmd) {
	case KFDSIM_IOC_CREATE_QUEUE:
		return ks_create_queue(p, filp, uarg);
	case KFDSIM_IOC_DESTROY_QUEUE:
		return ks_destroy_queue(p, uarg);
	case KFDSIM_IOC_UPDATE_QUEUE:
		return ks_update_queue(p, uarg);
	case KFDSIM_IOC_SET_CU_MASK:
		return ks_set_cu_mask(p, uarg);
	case KFDSIM_IOC_TEST:
		return ks_test(p, uarg);
	case KFDSIM_IOC_CREATE_PROCESS:
		return ks_process_create_secondary(filp);
	default:
		pr_err_ratelimited("unknown ioctl 0x%x\n", cmd);
		return -ENOTTY;
	}
}

static const struct file_operations ks_fops = {
	.owner = THIS_MODULE,
	.open = ks_open,
	.release = ks_release,
	.unlocked_ioctl = ks_ioctl,
	.compat_ioctl = ks_ioctl,
	.mmap = ks_mmap,
};

static struct miscdevice ks_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "kfdsim",
	.fops = &ks_fops,
	.mode = 0666,
};

/**
 * ks_chardev_init() - register /dev/kfdsim
 *
 * Return: 0 or a negative errno.
 */
int ks_chardev_init(void)
{
	return misc_register(&ks_misc);
}

/**
 * ks_chardev_exit() - unregister /dev/kfdsim
 */
void ks_chardev_exit(void)
{
	misc_deregister(&ks_misc);
}
