// SPDX-License-Identifier: GPL-2.0
/*
 * ksyms.c - resolve and call the kernel and amdkfd functions gpreempt needs
 * that are not exported.
 *
 * Nothing in amdkfd is exported, and neither are kallsyms_lookup_name() and
 * __module_address().  kallsyms_lookup_name is found with a kprobe (its
 * address is all we want) and the others through it.  The module that
 * provides KFD (amdgpu, or kfdsim in tests) is pinned with a module
 * reference for as long as gpreempt is loaded.
 *
 * IBT: none of these functions is address-taken in its own image, so objtool
 * lists them in .ibt_endbr_seal and, on a CPU with IBT, the kernel replaces
 * their ENDBR with a NOP at load.  An indirect call to them would raise #CP
 * ("Missing ENDBR").  So every one of them is called through a static_call:
 * static_call_update() patches each call site (HAVE_STATIC_CALL_INLINE) or
 * the trampoline into a direct CALL/JMP, and a direct branch needs no ENDBR.
 * The only indirect calls gpreempt makes into KFD are through dqm->ops,
 * whose targets are address-taken and keep their ENDBR; scripts/ibt-check
 * proves both facts on the target binaries at build time, and
 * gp_ksyms_op_callable() checks the second on the running kernel.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/static_call.h>
#include <asm/cpufeature.h>
#include "testing.h"
#include "kfd/ksyms.h"
#include "kfd/kfd.h"

#define GP_ENDBR64 0xfa1e0ff3U	/* f3 0f 1e fa: endbr64 */

/* What a static_call runs before static_call_update(): nothing found. */
static unsigned long gp_no_kallsyms_lookup_name(const char *name)
{
	return 0;
}

static struct module *gp_no_module_address(unsigned long addr)
{
	return NULL;
}

DEFINE_STATIC_CALL(gp_sc_kallsyms_lookup_name, gp_no_kallsyms_lookup_name);
DEFINE_STATIC_CALL(gp_sc_module_address, gp_no_module_address);
DEFINE_STATIC_CALL_NULL(gp_sc_lookup_pasid, gp_fn_kfd_lookup_process_by_pasid_t);
DEFINE_STATIC_CALL_NULL(gp_sc_unref_process, gp_fn_kfd_unref_process_t);

static struct module *gp_kfd_owner;
static bool gp_have_kallsyms, gp_have_kfd;

/* Test switch: act as if the CPU enforced IBT (TCG does not emulate it). */

static int gp_find_kallsyms_lookup_name(void)
{
	struct kprobe kp = { .symbol_name = "kallsyms_lookup_name" };
	int ret;

	ret = register_kprobe(&kp);
	if (ret) {
		pr_err("cannot locate kallsyms_lookup_name (kprobes unavailable?): %d\n", ret);
		return ret;
	}
	/*
	 * kp.addr may sit after the (possibly sealed) ENDBR: a direct call
	 * there skips a 4-byte ENDBR or NOP and runs the same function.
	 */
	static_call_update(gp_sc_kallsyms_lookup_name,
			   (void *)kp.addr);
	unregister_kprobe(&kp);
	gp_have_kallsyms = true;
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
	return gp_have_kallsyms ? static_call(gp_sc_kallsyms_lookup_name)(name) : 0;
}

/**
 * gp_kfd_lookup_pasid() - kfd_lookup_process_by_pasid()
 * @pasid: PASID (any of a process's on 6.17+, see kfd_p_pasid())
 *
 * Return: the process with a reference (drop with gp_kfd_unref()), or NULL.
 */
struct kfd_process *gp_kfd_lookup_pasid(u32 pasid)
{
	if (!gp_have_kfd)
		return NULL;
	return kfd_call_lookup_pasid(static_call(gp_sc_lookup_pasid), pasid);
}

/**
 * gp_kfd_unref() - kfd_unref_process()
 * @p: a process referenced by gp_kfd_lookup_pasid()
 */
void gp_kfd_unref(struct kfd_process *p)
{
	static_call(gp_sc_unref_process)(p);
}

static int gp_resolve(const char *name, unsigned long *addr)
{
	struct module *mod;

	*addr = gp_lookup_name(name);
	if (!*addr) {
		pr_err("KFD function %s not found: is amdgpu (with KFD) loaded?\n", name);
		return -ENOENT;
	}
	preempt_disable();
	mod = static_call(gp_sc_module_address)(*addr);
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
	return 0;
}

/**
 * gp_ksyms_ibt_enforced() - would an indirect call to a sealed function fault?
 *
 * Return: true on a CPU with IBT enabled (or with the GP_TESTING build's test_ibt).
 */
bool gp_ksyms_ibt_enforced(void)
{
	return gp_test_ibt() || (IS_ENABLED(CONFIG_X86_KERNEL_IBT) &&
			       cpu_feature_enabled(X86_FEATURE_IBT));
}

/**
 * gp_ksyms_op_callable() - may gpreempt call @fn through a pointer?
 * @fn: a dqm->ops target of the running KFD
 *
 * On an IBT CPU an indirect call must land on an ENDBR.  dqm->ops targets
 * are address-taken and keep theirs; this checks that they do.
 *
 * Return: false if an indirect call to @fn could fault.
 */
bool gp_ksyms_op_callable(const void *fn)
{
	u32 insn;

	if (!gp_ksyms_ibt_enforced())
		return true;
	return fn && !copy_from_kernel_nofault(&insn, fn, sizeof(insn)) && insn == GP_ENDBR64;
}

/**
 * gp_ksyms_init() - find every function gpreempt calls directly
 *
 * Return: 0, or a negative errno after one line naming what is missing.
 */
int gp_ksyms_init(void)
{
	unsigned long addr;
	int ret;

	ret = gp_find_kallsyms_lookup_name();
	if (ret)
		return ret;
	addr = gp_lookup_name("__module_address");
	if (!addr) {
		pr_err("cannot locate __module_address\n");
		return -ENOENT;
	}
	static_call_update(gp_sc_module_address, (void *)addr);

	ret = gp_resolve("kfd_lookup_process_by_pasid", &addr);
	if (ret)
		goto err;
	static_call_update(gp_sc_lookup_pasid, (gp_fn_kfd_lookup_process_by_pasid_t *)addr);
	ret = gp_resolve("kfd_unref_process", &addr);
	if (ret)
		goto err;
	static_call_update(gp_sc_unref_process, (gp_fn_kfd_unref_process_t *)addr);
	gp_have_kfd = true;
	pr_debug("KFD provided by %s\n", gp_kfd_owner->name);
	return 0;

err:
	gp_ksyms_exit();
	return ret;
}

/**
 * gp_ksyms_owner() - the module that provides KFD
 *
 * Return: the pinned module, or NULL before gp_ksyms_init().
 */
struct module *gp_ksyms_owner(void)
{
	return gp_kfd_owner;
}

/**
 * gp_ksyms_exit() - drop the reference on the KFD provider
 */
void gp_ksyms_exit(void)
{
	gp_have_kfd = false;
	if (gp_kfd_owner)
		module_put(gp_kfd_owner);
	gp_kfd_owner = NULL;
}
