// SPDX-License-Identifier: GPL-2.0
/*
 * ks_decoy.c - a module with a function named like one gpreempt probes in
 * KFD (pqm_uninit), loaded after kfdsim: kallsyms then finds this one first.
 * gpreempt must refuse to probe it (REVIEW-S3 F15, test/vm/sim-decoy.sh).
 */
#include <linux/compiler.h>
#include <linux/module.h>

static noinline __used int pqm_uninit(void *pqm)
{
	return pqm ? 0 : -EINVAL;
}

static int __init ks_decoy_init(void)
{
	return pqm_uninit(THIS_MODULE);
}

static void __exit ks_decoy_exit(void)
{
}

module_init(ks_decoy_init);
module_exit(ks_decoy_exit);
MODULE_DESCRIPTION("kfdsim test: a function with a KFD name in another module");
MODULE_LICENSE("GPL");
