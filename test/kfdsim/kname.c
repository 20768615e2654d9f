// SPDX-License-Identifier: GPL-2.0
/*
 * kname.c - each dispatch's kernel name, from the code object loaded in the
 * process's GPU VM, and a *modelled* cost per workgroup by name.
 *
 * kfdsim runs no ISA.  Its own `work` kernel (test/hip/hip-work.hip) and the
 * test clients' packets give their time per workgroup as the first kernarg,
 * in ns; real programs (ggml, rocBLAS) take a pointer or a size first.  So
 * the CP asks here for the name of a dispatch's kernel_object:
 *   - ROCr's loader copies a code object's segments into GPU memory, the
 *     ELF header first (kname_elf.c).  From the kernel_object's page back
 *     (at most KS_KNAME_SCAN, inside its buffer) the first page that starts
 *     with an AMDGPU ELF header is the image; its .dynsym entry whose value
 *     is kernel_object - base is the kernel descriptor, "name.kd".
 *   - The result, found or not, is cached per process by kernel_object, at
 *     most KS_KNAME_MAX entries; a kernel_object in no mapped buffer is
 *     neither walked nor cached.
 * debugfs kfdsim/costs (root) holds the table: "prefix a b off" lines mean
 * ns per workgroup = a + b * u32(kernarg + off) for a name that starts with
 * prefix, the longest prefix first.  A named kernel in no row costs
 * kname_default_wg_ns per workgroup.  debugfs kfdsim/kernels shows the
 * dispatches and modelled ns per name.
 *
 * Locks: p->ks_vm_lock (the caller's) covers the walk and the cache insert;
 * ks_cost_lock and ks_kstat_lock are leaves.  All are taken from the CP's
 * kthread and from process context, never from an interrupt.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/module.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/xarray.h>

#include "kfdsim.h"
#include "kname_elf.h"

/* How far below a kernel_object its code object's header is looked for */
#define KS_KNAME_SCAN SZ_32M
/* Cached kernel_objects per process; past it a new one is "unknown" */
#define KS_KNAME_MAX 4096
#define KS_KNAME_LEN 128
#define KS_COST_MAX 64
#define KS_COST_PREFIX 64
#define KS_COSTS_WRITE_MAX SZ_16K
/* Names counted in debugfs kernels (the rest as "other"), names shown */
#define KS_KSTAT_MAX 64
#define KS_KSTAT_SHOW 32

static unsigned int ks_default_wg_ns = 2000;
module_param_named(kname_default_wg_ns, ks_default_wg_ns, uint, 0444);
MODULE_PARM_DESC(kname_default_wg_ns,
		 "modelled ns per workgroup of a named kernel in no row of debugfs costs (default 2000)");

struct ks_kname {
	char name[KS_KNAME_LEN];	/* "" when the image named nothing */
};

struct ks_cost {
	char prefix[KS_COST_PREFIX];
	u32 len, a, b, off;
};

static DEFINE_SPINLOCK(ks_cost_lock);
static struct ks_cost ks_costs[KS_COST_MAX];	/* longest prefix first */
static unsigned int ks_ncosts;

struct ks_kstat {
	char name[KS_COST_PREFIX];
	u64 dispatches, ns;
};

static DEFINE_SPINLOCK(ks_kstat_lock);
static struct ks_kstat ks_kstats[KS_KSTAT_MAX + 1];	/* the last: "other" */
static unsigned int ks_nkstats;

/**
 * ks_kname_process_init() - an empty name cache
 * @p: new process
 */
void ks_kname_process_init(struct kfd_process *p)
{
	xa_init(&p->ks_knames);
	atomic_set(&p->ks_nknames, 0);
}

/**
 * ks_kname_process_free() - free the name cache
 * @p: process, no longer used by anyone
 */
void ks_kname_process_free(struct kfd_process *p)
{
	struct ks_kname *e;
	unsigned long i;

	xa_for_each(&p->ks_knames, i, e)
		kfree(e);
	xa_destroy(&p->ks_knames);
}

/*
 * Walk back from @ko's page to the first AMDGPU ELF header in its buffer.
 * Return: false when @ko is in no mapped buffer (nothing to cache).
 */
static bool ks_kname_walk_locked(struct kfd_process *p, u64 ko, char *name, u32 size)
{
	u64 bo_va, bo_size, va = ko & PAGE_MASK;
	const u8 *base = ks_vm_buffer_locked(p, ko, &bo_va, &bo_size);

	name[0] = 0;
	if (!base)
		return false;
	while (va >= bo_va && ko - va < KS_KNAME_SCAN) {
		const u8 *img = base + (va - bo_va);
		u64 len = bo_size - (va - bo_va);

		if (ks_elf_is_amdgpu(img, len)) {
			ks_elf_sym_name(img, len, ko - va, name, size);
			break;
		}
		if (va < PAGE_SIZE)
			break;
		va -= PAGE_SIZE;
	}
	return true;
}

/**
 * ks_kname_locked() - the name of a dispatch's kernel
 * @p: process, p->ks_vm_lock held
 * @kernel_object: the AQL packet's kernel_object
 *
 * Return: the name without ".kd" (valid while @p lives), or NULL when it is
 * unknown: no code object holds it, or the cache is full.
 */
const char *ks_kname_locked(struct kfd_process *p, u64 kernel_object)
{
	struct ks_kname *e = xa_load(&p->ks_knames, kernel_object);
	char name[KS_KNAME_LEN];

	lockdep_assert_held(&p->ks_vm_lock);
	if (e)
		return e->name[0] ? e->name : NULL;
	if (atomic_read(&p->ks_nknames) >= KS_KNAME_MAX ||
	    !ks_kname_walk_locked(p, kernel_object, name, sizeof(name)))
		return NULL;
	e = kmalloc(sizeof(*e), GFP_ATOMIC);
	if (!e)
		return NULL;
	strscpy(e->name, name, sizeof(e->name));
	if (xa_insert(&p->ks_knames, kernel_object, e, GFP_ATOMIC)) {
		kfree(e);
		return NULL;
	}
	atomic_inc(&p->ks_nknames);
	return e->name[0] ? e->name : NULL;
}

/**
 * ks_kname_cost_locked() - a named kernel's modelled ns per workgroup
 * @p: process, p->ks_vm_lock held
 * @name: the kernel's name
 * @kernarg: the dispatch's kernarg_address
 * @ns: the cost: the table's row, else kname_default_wg_ns
 *
 * Return: true when a row of the table matched @name.
 */
bool ks_kname_cost_locked(struct kfd_process *p, const char *name, u64 kernarg, u64 *ns)
{
	u32 a = 0, b = 0, off = 0, v = 0;
	bool found = false;
	unsigned int i;
	u64 at, *k;

	spin_lock(&ks_cost_lock);
	for (i = 0; i < ks_ncosts && !found; i++) {
		if (!strncmp(name, ks_costs[i].prefix, ks_costs[i].len)) {
			a = ks_costs[i].a;
			b = ks_costs[i].b;
			off = ks_costs[i].off;
			found = true;
		}
	}
	spin_unlock(&ks_cost_lock);
	if (!found) {
		*ns = READ_ONCE(ks_default_wg_ns);
		return false;
	}
	/*
	 * ks_vm_kaddr_locked() takes 8-byte aligned addresses only, and a u32
	 * argument is often at 4 mod 8 (Tensile's SizesSum at 100): map the
	 * aligned words that hold it, one or two.
	 */
	at = kernarg + off;
	k = at >= kernarg ? ks_vm_kaddr_locked(p, at & ~7ULL, ALIGN((at & 7) + 4, 8)) : NULL;
	if (b && k)
		memcpy(&v, (u8 *)k + (at & 7), sizeof(v));
	*ns = (u64)a + (u64)b * v;	/* at most 2^64 - 2^33: no wrap */
	return true;
}

/**
 * ks_kname_account() - count one dispatch of a kernel in debugfs kernels
 * @name: its name ("?" unknown)
 * @ns: its modelled time, all workgroups
 */
void ks_kname_account(const char *name, u64 ns)
{
	char key[KS_COST_PREFIX];
	struct ks_kstat *s = NULL;
	unsigned int i;

	strscpy(key, name, sizeof(key));
	spin_lock(&ks_kstat_lock);
	for (i = 0; i < ks_nkstats && !s; i++)
		if (!strcmp(ks_kstats[i].name, key))
			s = &ks_kstats[i];
	if (!s && ks_nkstats < KS_KSTAT_MAX) {
		s = &ks_kstats[ks_nkstats++];
		strscpy(s->name, key, sizeof(s->name));
	}
	if (!s)
		s = &ks_kstats[KS_KSTAT_MAX];
	s->dispatches++;
	s->ns += ns;
	spin_unlock(&ks_kstat_lock);
}

static int ks_kstat_cmp(const void *x, const void *y)
{
	const struct ks_kstat *a = x, *b = y;

	return a->ns < b->ns ? 1 : a->ns > b->ns ? -1 : strcmp(a->name, b->name);
}

static int ks_kernels_show(struct seq_file *m, void *unused)
{
	struct ks_kstat *snap, other;
	unsigned int i, n;

	snap = kcalloc(KS_KSTAT_MAX + 1, sizeof(*snap), GFP_KERNEL);
	if (!snap)
		return -ENOMEM;
	spin_lock(&ks_kstat_lock);
	n = ks_nkstats;
	memcpy(snap, ks_kstats, sizeof(ks_kstats));
	spin_unlock(&ks_kstat_lock);
	other = snap[KS_KSTAT_MAX];
	sort(snap, n, sizeof(*snap), ks_kstat_cmp, NULL);
	seq_puts(m,
		 "# modelled time per kernel name (\"?\" unknown), most first: dispatches ns name\n");
	for (i = 0; i < n; i++) {
		if (i < KS_KSTAT_SHOW) {
			seq_printf(m, "%llu %llu %s\n", snap[i].dispatches, snap[i].ns,
				   snap[i].name);
		} else {
			other.dispatches += snap[i].dispatches;
			other.ns += snap[i].ns;
		}
	}
	if (other.dispatches)
		seq_printf(m, "%llu %llu other\n", other.dispatches, other.ns);
	kfree(snap);
	return 0;
}

static int ks_kernels_open(struct inode *inode, struct file *file)
{
	return single_open(file, ks_kernels_show, NULL);
}

/* Any write clears the counters. */
static ssize_t ks_kernels_write(struct file *file, const char __user *buf, size_t len,
				loff_t *ppos)
{
	spin_lock(&ks_kstat_lock);
	memset(ks_kstats, 0, sizeof(ks_kstats));
	ks_nkstats = 0;
	spin_unlock(&ks_kstat_lock);
	return len;
}

static const struct file_operations ks_kernels_fops = {
	.owner = THIS_MODULE,
	.open = ks_kernels_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = single_release,
	.write = ks_kernels_write,
};

static int ks_costs_show(struct seq_file *m, void *unused)
{
	unsigned int i;

	seq_puts(m, "# modelled: ns per workgroup = a + b * u32(kernarg + off), longest prefix first\n");
	seq_printf(m, "# a named kernel in no row: %u ns per workgroup (kname_default_wg_ns)\n",
		   READ_ONCE(ks_default_wg_ns));
	spin_lock(&ks_cost_lock);
	for (i = 0; i < ks_ncosts; i++)
		seq_printf(m, "%s %u %u %u\n", ks_costs[i].prefix, ks_costs[i].a,
			   ks_costs[i].b, ks_costs[i].off);
	spin_unlock(&ks_cost_lock);
	return 0;
}

static int ks_costs_open(struct inode *inode, struct file *file)
{
	return single_open(file, ks_costs_show, NULL);
}

static int ks_cost_cmp(const void *x, const void *y)
{
	const struct ks_cost *a = x, *b = y;

	return (int)b->len - (int)a->len;
}

/*
 * One write replaces the whole table: "prefix a b off" per line, '#'
 * comments and blank lines skipped; an empty write empties it.  A bad line
 * refuses the write and keeps the old table.
 */
static ssize_t ks_costs_write(struct file *file, const char __user *buf, size_t len,
			      loff_t *ppos)
{
	struct ks_cost *t;
	unsigned int n = 0;
	char *text, *s, *line;
	ssize_t ret = len;

	if (*ppos || len > KS_COSTS_WRITE_MAX)
		return -EINVAL;
	text = memdup_user_nul(buf, len);
	if (IS_ERR(text))
		return PTR_ERR(text);
	t = kcalloc(KS_COST_MAX, sizeof(*t), GFP_KERNEL);
	if (!t) {
		kfree(text);
		return -ENOMEM;
	}
	s = text;
	while ((line = strsep(&s, "\n"))) {
		char extra;

		line = strim(line);
		if (!*line || *line == '#')
			continue;
		if (n == KS_COST_MAX ||
		    sscanf(line, "%63s %u %u %u %c", t[n].prefix, &t[n].a, &t[n].b, &t[n].off,
			   &extra) != 4) {
			ret = -EINVAL;
			goto out;
		}
		t[n].len = strlen(t[n].prefix);
		n++;
	}
	sort(t, n, sizeof(*t), ks_cost_cmp, NULL);
	spin_lock(&ks_cost_lock);
	memcpy(ks_costs, t, n * sizeof(*t));
	ks_ncosts = n;
	spin_unlock(&ks_cost_lock);
out:
	kfree(t);
	kfree(text);
	return ret;
}

static const struct file_operations ks_costs_fops = {
	.owner = THIS_MODULE,
	.open = ks_costs_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = single_release,
	.write = ks_costs_write,
};

/**
 * ks_kname_debugfs() - debugfs costs (the table) and kernels (the counters)
 * @parent: kfdsim's debugfs directory
 */
void ks_kname_debugfs(struct dentry *parent)
{
	debugfs_create_file("costs", 0600, parent, NULL, &ks_costs_fops);
	debugfs_create_file("kernels", 0644, parent, NULL, &ks_kernels_fops);
}
