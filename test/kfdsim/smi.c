// SPDX-License-Identifier: GPL-2.0
/*
 * smi.c - AMDKFD_IOC_SMI_EVENTS: the system management event fd, for the GPU
 * reset events (6.12 kfd_smi_events.c).  A client is opened per device with
 * the gpu_id of a device of its process; writing a u64 mask selects the
 * events (KFD_SMI_EVENT_MASK_FROM_INDEX); read() returns the queued text
 * lines, "EVENT ARGS\n" in hex, or -EAGAIN when there is none, blocking
 * or not, as KFD's.  kfdsim sends GPU_PRE_RESET ("3 SEQ CAUSE") and
 * GPU_POST_RESET (4, SEQ and no cause) around its modelled GPU reset, with the
 * device's reset_seq_num counted at each pre-reset (kfd_smi_events.c:
 * 219-236); a reset event has no pid, so every client that asked gets it.
 */
#include <linux/anon_inodes.h>
#include <linux/file.h>
#include <linux/kfifo.h>
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <uapi/linux/kfd_ioctl.h>
#include "kfdsim.h"

#define KS_SMI_FIFO 1024	/* MAX_KFIFO_SIZE */
#define KS_SMI_MSG 96		/* KFD_SMI_EVENT_MSG_SIZE */

struct ks_smi_client {
	struct list_head list;
	struct kfifo fifo;
	wait_queue_head_t wait;
	u64 events;
	u32 dev;
	spinlock_t lock;	/* the fifo */
};

static LIST_HEAD(ks_smi_clients);
static DEFINE_SPINLOCK(ks_smi_lock);	/* the list */
static u32 ks_smi_seq[KS_MAX_DEVS];	/* kfd_node.reset_seq_num */

static __poll_t ks_smi_poll(struct file *f, struct poll_table_struct *wait)
{
	struct ks_smi_client *c = f->private_data;
	__poll_t mask = 0;

	poll_wait(f, &c->wait, wait);
	spin_lock(&c->lock);
	if (!kfifo_is_empty(&c->fifo))
		mask = EPOLLIN | EPOLLRDNORM;
	spin_unlock(&c->lock);
	return mask;
}

static ssize_t ks_smi_read(struct file *f, char __user *user, size_t size, loff_t *off)
{
	struct ks_smi_client *c = f->private_data;
	unsigned int n;
	char *buf;
	ssize_t ret;

	size = min_t(size_t, size, KS_SMI_FIFO);
	buf = kmalloc(size, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	spin_lock(&c->lock);
	n = kfifo_out(&c->fifo, buf, size);
	spin_unlock(&c->lock);
	if (!n)
		ret = -EAGAIN;
	else if (copy_to_user(user, buf, n))
		ret = -EFAULT;
	else
		ret = n;
	kfree(buf);
	return ret;
}

static ssize_t ks_smi_write(struct file *f, const char __user *user, size_t size, loff_t *off)
{
	struct ks_smi_client *c = f->private_data;
	u64 events;

	if (size < sizeof(events) || copy_from_user(&events, user, sizeof(events)))
		return -EFAULT;
	WRITE_ONCE(c->events, events);
	return sizeof(events);
}

static int ks_smi_release(struct inode *inode, struct file *f)
{
	struct ks_smi_client *c = f->private_data;

	spin_lock(&ks_smi_lock);
	list_del(&c->list);
	spin_unlock(&ks_smi_lock);
	kfifo_free(&c->fifo);
	kfree(c);
	return 0;
}

static const struct file_operations ks_smi_fops = {
	.owner = THIS_MODULE,
	.poll = ks_smi_poll,
	.read = ks_smi_read,
	.write = ks_smi_write,
	.release = ks_smi_release,
};

/**
 * ks_smi_open() - kfd_smi_event_open() for device @dev
 * @dev: index of the device (a device of the caller's process)
 * @fd: result: the new file descriptor
 *
 * Return: 0 or -errno.
 */
int ks_smi_open(u32 dev, u32 *fd)
{
	struct ks_smi_client *c = kzalloc(sizeof(*c), GFP_KERNEL);
	int ret;

	if (!c)
		return -ENOMEM;
	ret = kfifo_alloc(&c->fifo, KS_SMI_FIFO, GFP_KERNEL);
	if (ret) {
		kfree(c);
		return ret;
	}
	init_waitqueue_head(&c->wait);
	spin_lock_init(&c->lock);
	c->dev = dev;
	spin_lock(&ks_smi_lock);
	list_add(&c->list, &ks_smi_clients);
	spin_unlock(&ks_smi_lock);
	ret = anon_inode_getfd("kfd_smi_ev", &ks_smi_fops, c, O_RDWR);
	if (ret < 0) {
		spin_lock(&ks_smi_lock);
		list_del(&c->list);
		spin_unlock(&ks_smi_lock);
		kfifo_free(&c->fifo);
		kfree(c);
		return ret;
	}
	*fd = ret;
	return 0;
}

/**
 * ks_smi_gpu_reset() - kfd_smi_event_update_gpu_reset() for device @dev
 * @dev: index of the device
 * @post: GPU_POST_RESET (else GPU_PRE_RESET, which counts the reset)
 */
void ks_smi_gpu_reset(u32 dev, bool post)
{
	unsigned int ev = post ? KFD_SMI_EVENT_GPU_POST_RESET : KFD_SMI_EVENT_GPU_PRE_RESET;
	struct ks_smi_client *c;
	char msg[KS_SMI_MSG];
	int len;

	if (dev >= KS_MAX_DEVS)
		return;
	if (!post)
		ks_smi_seq[dev]++;
	/* KFD_EVENT_FMT_UPDATE_GPU_RESET: "%x %s\n", the cause (none modelled) */
	len = snprintf(msg, sizeof(msg), "%x %x %s\n", ev, ks_smi_seq[dev],
		       post ? "" : "kfdsim");
	spin_lock(&ks_smi_lock);
	list_for_each_entry(c, &ks_smi_clients, list) {
		if (c->dev != dev || !(READ_ONCE(c->events) & KFD_SMI_EVENT_MASK_FROM_INDEX(ev)))
			continue;
		spin_lock(&c->lock);
		if (kfifo_avail(&c->fifo) >= len) {
			kfifo_in(&c->fifo, msg, len);
			wake_up_all(&c->wait);
		}
		spin_unlock(&c->lock);
	}
	spin_unlock(&ks_smi_lock);
}
