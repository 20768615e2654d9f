// SPDX-License-Identifier: GPL-2.0
/*
 * ksyms.c - resolve the amdkfd functions gpreempt calls.
 *
 * Nothing in amdkfd is exported, and neither is kallsyms_lookup_name, so
 * the latter is found with a kprobe (its address is all we want) and the KFD
 * functions through it.  The module that provides them (amdgpu, or kfdsim in
 * tests) is pinned with a module reference for as long as gpreempt is loaded.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kprobes.h>
#include <linux/module.h>
#include "gpreempt.h"
#include "kfd.h"

struct gp_kfd_fns gp_kfd;
static unsigned long (*gp_kallsyms_lookup_name)(const char *name);
static struct module *gp_kfd_owner;
/* Not exported either; needed to pin the module that provides KFD. */
static struct module *(*gp_module_address)(unsigned long addr);

#define ENDBR64 0xfa1e0ff3U	/* f3 0f 1e fa */

static int gp_find_kallsyms_lookup_name(void)
{
	struct kprobe kp = { .symbol_name = "kallsyms_lookup_name" };
	unsigned long addr;
	int ret;

	ret = register_kprobe(&kp);
	if (ret) {
		pr_err("cannot locate kallsyms_lookup_name (kprobes unavailable?): %d\n", ret);
		return ret;
	}
	addr = (unsigned long)kp.addr;
	unregister_kprobe(&kp);
	/* On IBT kernels the probe sits after the ENDBR: step back to the entry. */
	if (IS_ENABLED(CONFIG_X86_KERNEL_IBT) && *(u32 *)(addr - 4) == ENDBR64)
		addr -= 4;
	gp_kallsyms_lookup_name = (void *)addr;
	return 0;
}

/**
 * gp_lookup_name() - kallsyms_lookup_name() for gpreempt
 * @name: symbol
 *
 * Return: the address, or 0 when the symbol does not exist.
 */
unsigned long gp_lookup_name(const char *name)
{
	return gp_kallsyms_lookup_name ? gp_kallsyms_lookup_name(name) : 0;
}

/**
 * gp_kfd_lookup_pasid() - kfd_lookup_process_by_pasid()
 * @pasid: PASID (any of a process's on 6.17+, see kfd_p_pasid())
 *
 * Return: the process with a reference (drop with gp_kfd.unref), or NULL.
 */
struct kfd_process *gp_kfd_lookup_pasid(u32 pasid)
{
	return kfd_call_lookup_pasid(gp_kfd.lookup_by_pasid, pasid);
}

static int gp_resolve(const char *name, void **fn)
{
	unsigned long addr = gp_lookup_name(name);
	struct module *mod;

	if (!addr) {
		pr_err("KFD function %s not found: is amdgpu (with KFD) loaded?\n", name);
		return -ENOENT;
	}
	preempt_disable();
	mod = gp_module_address(addr);
	if (mod && !gp_kfd_owner && !try_module_get(mod)) {
		preempt_enable();
		pr_err("%s is being unloaded\n", mod->name);
		return -ENODEV;
	}
	preempt_enable();
	if (!mod) {
		pr_err("%s is not in a module (built-in KFD is not supported)\n", name);
		return -ENOENT;
	}
	if (gp_kfd_owner && mod != gp_kfd_owner) {
		pr_err("%s is in %s, not in %s\n", name, mod->name, gp_kfd_owner->name);
		return -EINVAL;
	}
	if (!gp_kfd_owner)
		gp_kfd_owner = mod;
	*fn = (void *)addr;
	return 0;
}

/**
 * gp_ksyms_init() - find every KFD function gpreempt calls
 *
 * Return: 0, or a negative errno after one line naming what is missing.
 */
int gp_ksyms_init(void)
{
	int ret;

	ret = gp_find_kallsyms_lookup_name();
	if (ret)
		return ret;
	gp_module_address = (void *)gp_lookup_name("__module_address");
	if (!gp_module_address) {
		pr_err("cannot locate __module_address\n");
		return -ENOENT;
	}
	ret = gp_resolve("kfd_lookup_process_by_pasid", (void **)&gp_kfd.lookup_by_pasid);
	if (!ret)
		ret = gp_resolve("kfd_unref_process", (void **)&gp_kfd.unref);
	if (!ret)
		ret = gp_resolve("pqm_get_user_queue", (void **)&gp_kfd.get_user_queue);
	if (!ret)
		ret = gp_resolve("kfd_process_evict_queues", (void **)&gp_kfd.evict);
	if (!ret)
		ret = gp_resolve("kfd_process_restore_queues", (void **)&gp_kfd.restore);
	if (ret) {
		gp_ksyms_exit();
		return ret;
	}
	pr_debug("KFD provided by %s\n", gp_kfd_owner->name);
	return 0;
}

/**
 * gp_ksyms_exit() - drop the reference on the KFD provider
 */
void gp_ksyms_exit(void)
{
	if (gp_kfd_owner)
		module_put(gp_kfd_owner);
	gp_kfd_owner = NULL;
	memset(&gp_kfd, 0, sizeof(gp_kfd));
}
