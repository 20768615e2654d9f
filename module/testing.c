// SPDX-License-Identifier: GPL-2.0
/*
 * testing.c - race windows and limits for the race tests, in the GP_TESTING
 * build only.
 *
 * Some races need a window wide enough to be hit on every run: a queue
 * destroyed and recreated between a decision and p->mutex, a process dying
 * between the two phases of the registry reap, the queue limit reached with
 * three queues, and the IBT check of dqm->ops on a CPU without IBT (QEMU's).
 * make builds a second gpreempt.ko with GP_TESTING=1 into
 * build/testing/ for those tests (test/vm/long-faults.sh, sim-limits.sh).
 * The module users get, module/gpreempt.ko and the DKMS build, never links
 * this file: it has none of these parameters, never sleeps for a test and
 * never switches a defence off (test_defence_off=, test/run-defences).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/sysfs.h>
#include "gp_maps.h"
#include "policy/policy.h"
#include "testing.h"

static unsigned int gp_test_delay_us[2];
static unsigned int gp_test_queues;
static bool gp_test_ibt_on;
static unsigned int gp_test_maxactive_n;

static int gp_test_set(const char *val, const struct kernel_param *kp)
{
	unsigned int v;
	int ret = kstrtouint(val, 0, &v);

	if (ret || v > 1000000) {
		pr_err("%s=%s: not a number in 0..1000000\n", kp->name, val);
		return -EINVAL;
	}
	WRITE_ONCE(*(unsigned int *)kp->arg, v);
	return 0;
}

static const struct kernel_param_ops gp_test_ops = {
	.set = gp_test_set,
	.get = param_get_uint,
};

module_param_cb(test_action_delay_us, &gp_test_ops, &gp_test_delay_us[GP_TEST_ACTION], 0600);
MODULE_PARM_DESC(test_action_delay_us,
		 "TESTING BUILD: sleep this long before each park/unpark takes p->mutex [0..1000000] (default 0)");
module_param_cb(test_reap_delay_us, &gp_test_ops, &gp_test_delay_us[GP_TEST_REAP], 0600);
MODULE_PARM_DESC(test_reap_delay_us,
		 "TESTING BUILD: sleep this long between the two phases of each registry reap [0..1000000] (default 0)");
module_param_cb(test_max_queues, &gp_test_ops, &gp_test_queues, 0400);
MODULE_PARM_DESC(test_max_queues,
		 "TESTING BUILD: queues a device may have whose ids are read, and the scan arrays' first size, 0 = GP_MAX_QUEUES (4096) (default 0)");
module_param_named(test_ibt, gp_test_ibt_on, bool, 0400);
MODULE_PARM_DESC(test_ibt,
		 "TESTING BUILD: check dqm->ops targets for ENDBR as on an IBT CPU (default 0)");
module_param_named(test_maxactive, gp_test_maxactive_n, uint, 0400);
MODULE_PARM_DESC(test_maxactive,
		 "TESTING BUILD: maxactive of the SET_CU_MASK and update kretprobes, 0 = 1024 (default 0)");
/*
 * test_defence_off=NAME[,NAME...]: defences switched off, so that
 * test/run-defences can show each one's check failing without it.
 */
static unsigned long gp_defence_mask;

static int gp_defence_set(const char *val, const struct kernel_param *kp)
{
	char *buf, *cur, *tok;
	unsigned long mask = 0;
	int i, ret = 0;

	buf = kstrdup(val, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	cur = strim(buf);
	while ((tok = strsep(&cur, ",")) != NULL) {
		if (!*tok)
			continue;
		i = match_string(gp_defence_names, GP_DEF_COUNT, tok);
		if (i < 0) {
			pr_err("%s: no defence named '%s'\n", kp->name, tok);
			ret = -EINVAL;
			break;
		}
		mask |= BIT(i);
	}
	kfree(buf);
	if (!ret)
		WRITE_ONCE(gp_defence_mask, mask);
	return ret;
}

static int gp_defence_get(char *buf, const struct kernel_param *kp)
{
	unsigned long mask = READ_ONCE(gp_defence_mask);
	int i, n = 0;

	for (i = 0; i < GP_DEF_COUNT; i++)
		if (mask & BIT(i))
			n += sysfs_emit_at(buf, n, "%s%s", n ? "," : "", gp_defence_names[i]);
	return n + sysfs_emit_at(buf, n, "\n");
}

static const struct kernel_param_ops gp_defence_ops = {
	.set = gp_defence_set,
	.get = gp_defence_get,
};

module_param_cb(test_defence_off, &gp_defence_ops, NULL, 0600);
MODULE_PARM_DESC(test_defence_off,
		 "TESTING BUILD: defences switched off, NAME[,NAME...] of unknown,progress,barrier,group,barrier_release,yield_cap,goes_along,not_aql,ids_page,park_recheck (default none)");
MODULE_INFO(testing, "GP_TESTING build with test-only race windows; not for production");

/**
 * gp_test_window() - sleep for the race window @w, if a test opened it
 * @w: which window
 */
void gp_test_window(enum gp_test_window w)
{
	unsigned int us = READ_ONCE(gp_test_delay_us[w]);

	if (us)
		usleep_range(us, us + us / 8 + 1);
}

/**
 * gp_test_max_queues() - the test's lower queue limit
 *
 * Return: the limit, or 0 for GP_MAX_QUEUES.
 */
unsigned int gp_test_max_queues(void)
{
	return min_t(unsigned int, gp_test_queues, GP_MAX_QUEUES);
}

/**
 * gp_test_ibt() - check dqm->ops targets for ENDBR as on an IBT CPU
 *
 * Return: the test's switch.
 */
bool gp_test_ibt(void)
{
	return gp_test_ibt_on;
}

/**
 * gp_test_maxactive() - the test's kretprobe instance count
 *
 * Return: the count, or 0 for the default.
 */
unsigned int gp_test_maxactive(void)
{
	return gp_test_maxactive_n;
}

/**
 * gp_test_defence_off() - is defence @d switched off by test_defence_off=?
 * @d: the defence
 *
 * Return: true when a test switched it off.
 */
bool gp_test_defence_off(enum gp_defence d)
{
	return READ_ONCE(gp_defence_mask) & BIT(d);
}
