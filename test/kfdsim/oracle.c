// SPDX-License-Identifier: GPL-2.0
/*
 * oracle.c - sched=oracle: the priorities of the simulated hardware's
 * perfect preemptive scheduler (gpu.c does the preempting).
 *
 * A queue's oracle level is the level of the rule of its process's cgroup
 * (cgroup v2; the deepest rule on the path from the process's cgroup to the
 * root wins, as gpreemptctl's cgroup rules do), else its MQD priority (what
 * gpreempt falls back to without a rule).  Rules are written by root to
 * debugfs kfdsim/oracle_rules, one "CGROUP_ID LEVEL" a line (the cgroup's id
 * is its directory's inode number on cgroup2, `stat -c %i DIR`); "clear"
 * drops them all.  A queue takes its level when it is created and again at
 * every rule write, so the bench gives kfdsim the same rules it gives
 * gpreemptctl.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cgroup.h>
#include <linux/debugfs.h>
#include <linux/seq_file.h>
#include <linux/uaccess.h>
#include "kfdsim.h"

#define KS_ORACLE_RULES 16

struct ks_oracle_rule {
	u64 cgid;
	u32 level;
};

static DEFINE_SPINLOCK(ks_oracle_lock);	/* the table; after a gpu lock */
static struct ks_oracle_rule ks_oracle_rule[KS_ORACLE_RULES];
static unsigned int ks_oracle_nrules;

/**
 * ks_oracle_level() - the rule level of @task's cgroup or its nearest ancestor's
 * @task: a process's lead thread (referenced)
 *
 * Return: the level, or -1 without a rule.
 */
int ks_oracle_level(struct task_struct *task)
{
	struct cgroup *cg;
	int level = -1;
	unsigned int i;

	if (!task)
		return -1;
	spin_lock(&ks_oracle_lock);
	rcu_read_lock();
	for (cg = ks_oracle_nrules ? task_dfl_cgroup(task) : NULL; cg && level < 0;
	     cg = cgroup_parent(cg))
		for (i = 0; i < ks_oracle_nrules; i++)
			if (ks_oracle_rule[i].cgid == cgroup_id(cg))
				level = ks_oracle_rule[i].level;
	rcu_read_unlock();
	spin_unlock(&ks_oracle_lock);
	return level;
}

static int ks_oracle_show(struct seq_file *m, void *unused)
{
	unsigned int i;

	spin_lock(&ks_oracle_lock);
	for (i = 0; i < ks_oracle_nrules; i++)
		seq_printf(m, "%llu %u\n", ks_oracle_rule[i].cgid, ks_oracle_rule[i].level);
	spin_unlock(&ks_oracle_lock);
	return 0;
}

static int ks_oracle_open(struct inode *inode, struct file *file)
{
	return single_open(file, ks_oracle_show, NULL);
}

static ssize_t ks_oracle_write(struct file *file, const char __user *ubuf, size_t len,
			       loff_t *ppos)
{
	char buf[48];
	unsigned int i, level;
	u64 cgid;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	spin_lock(&ks_oracle_lock);
	if (sysfs_streq(buf, "clear")) {
		ks_oracle_nrules = 0;
	} else if (sscanf(buf, "%llu %u", &cgid, &level) == 2 && level <= 15) {
		for (i = 0; i < ks_oracle_nrules && ks_oracle_rule[i].cgid != cgid; i++)
			;
		if (i == KS_ORACLE_RULES) {
			spin_unlock(&ks_oracle_lock);
			return -ENOSPC;
		}
		ks_oracle_rule[i].cgid = cgid;
		ks_oracle_rule[i].level = level;
		ks_oracle_nrules = max(ks_oracle_nrules, i + 1);
	} else {
		spin_unlock(&ks_oracle_lock);
		return -EINVAL;
	}
	spin_unlock(&ks_oracle_lock);
	/* Existing queues take the new levels. */
	ks_gpu_oracle_refresh();
	return len;
}

static const struct file_operations ks_oracle_fops = {
	.owner = THIS_MODULE,
	.open = ks_oracle_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = single_release,
	.write = ks_oracle_write,
};

/**
 * ks_oracle_debugfs() - kfdsim/oracle_rules
 * @parent: kfdsim's debugfs directory
 */
void ks_oracle_debugfs(struct dentry *parent)
{
	debugfs_create_file("oracle_rules", 0600, parent, NULL, &ks_oracle_fops);
}
