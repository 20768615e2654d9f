// SPDX-License-Identifier: GPL-2.0
/*
 * layout_check.c - refuse to load next to a KFD whose layout is not the one
 * gpreempt was built for (review finding C2).
 *
 * gpreempt reads and writes amdkfd's structures at offsets generated at build
 * time (gp_layout.h).  Next to another amdgpu build (a DKMS update, a kernel
 * upgrade without a rebuild) those offsets would corrupt memory, so insmod
 * first proves the match:
 *  - with BTF (/sys/kernel/btf/<provider>): every member offset and size,
 *    parameter position and enumerator value gpreempt relies on is looked up
 *    in the running module's BTF (btf_walk.c) and must equal the built-in one;
 *  - without BTF (ROCm DKMS builds): the provider's GNU build id
 *    (/sys/module/<provider>/notes/.note.gnu.build-id) must be the one
 *    recorded when the layout was made: the very same binary.
 * Anything else fails insmod with one line naming both sides.
 *
 * mod->btf_data is gone once a module is live, so the BTF is read back from
 * sysfs, as user space reads it, but through init's root, so that the mount
 * namespace insmod runs in does not matter.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/elf.h>
#include <linux/fs.h>
#include <linux/fs_struct.h>
#include <linux/pid_namespace.h>
#include <linux/sched/task.h>
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/slab.h>
#include "kfd/btf_walk.h"
#include "kfd/layout_check.h"
#include "kfd/kfd.h"

#define GP_BTF_FILE_MAX (64 << 20)	/* vmlinux BTF is ~5 MB on 6.12 and 7.3 */
#define GP_NT_GNU_BUILD_ID 3		/* elf.h, not in every kernel header set */

static const struct gp_layout_item gp_layout_items[] = {
	GP_LAYOUT_CHECKS(GP_LAYOUT_FIELD, GP_LAYOUT_ARG, GP_LAYOUT_ENUMV)
};

/*
 * The root of the machine's init (PID 1 of the initial PID namespace), where
 * the kernel's /sys is mounted, whatever root and mount namespace insmod
 * runs in: a container, or an initramfs before switch_root.
 * Not init_task's: on 7.3.4 that stayed the initramfs after switch_root
 * (seen in the test guest: /sys/kernel/btf not found there).
 * Return: 0 with @root held (path_put() it), or -ESRCH.
 */
static int gp_init_root(struct path *root)
{
	struct task_struct *init;
	int ret = -ESRCH;

	rcu_read_lock();
	init = pid_task(find_pid_ns(1, &init_pid_ns), PIDTYPE_PID);
	if (init)
		get_task_struct(init);
	rcu_read_unlock();
	if (!init)
		return ret;
	task_lock(init);
	if (init->fs) {
		get_fs_root(init->fs, root);
		ret = 0;
	}
	task_unlock(init);
	put_task_struct(init);
	return ret;
}

/*
 * A whole sysfs file into a kvmalloc'ed buffer; ERR_PTR on error.  The path
 * is resolved from init's root (gp_init_root()), then, if it is not there,
 * from insmod's own.  kernel_read_file_from_path_initns() is not used: it
 * runs the LSM kernel_read_file hook, which has no id for "BTF" (IPE warns
 * on READING_UNKNOWN).
 */
static void *gp_read_file(const char *path, size_t *len)
{
	struct path root;
	struct file *f = ERR_PTR(-ENOENT);
	loff_t size, pos = 0;
	void *buf;

	if (!gp_init_root(&root)) {
		f = file_open_root(&root, path, O_RDONLY, 0);
		path_put(&root);
	}
	if (IS_ERR(f))
		f = filp_open(path, O_RDONLY, 0);
	if (IS_ERR(f))
		return ERR_CAST(f);
	size = i_size_read(file_inode(f));
	if (size <= 0 || size > GP_BTF_FILE_MAX) {
		filp_close(f, NULL);
		return ERR_PTR(-EFBIG);
	}
	buf = kvmalloc(size, GFP_KERNEL);
	if (!buf) {
		filp_close(f, NULL);
		return ERR_PTR(-ENOMEM);
	}
	while (pos < size) {
		ssize_t n = kernel_read(f, buf + pos, size - pos, &pos);

		if (n <= 0)
			break;
	}
	filp_close(f, NULL);
	if (pos != size) {
		kvfree(buf);
		return ERR_PTR(-EIO);
	}
	*len = size;
	return buf;
}

/* The GNU build id of module @name, in hex; "" if it has none. */
static int gp_build_id(const char *name, char *hex, size_t hexlen)
{
	char path[96];
	const struct elf64_note *n;
	const u8 *desc;
	size_t len, i;
	void *buf;
	int ret = -ENOENT;

	hex[0] = '\0';
	snprintf(path, sizeof(path), "/sys/module/%s/notes/.note.gnu.build-id", name);
	buf = gp_read_file(path, &len);
	if (IS_ERR(buf))
		return PTR_ERR(buf);
	n = buf;
	if (len >= sizeof(*n) && n->n_type == GP_NT_GNU_BUILD_ID && n->n_namesz == 4 &&
	    sizeof(*n) + 4 + (size_t)n->n_descsz <= len && n->n_descsz * 2 < hexlen) {
		desc = (const u8 *)(n + 1) + 4;
		for (i = 0; i < n->n_descsz; i++)
			snprintf(hex + 2 * i, 3, "%02x", desc[i]);
		ret = 0;
	}
	kvfree(buf);
	return ret;
}

/* No BTF: the provider must be the binary the layout was generated from. */
static int gp_layout_check_build_id(const char *name, const char *no_btf)
{
	char id[2 * 64 + 1];
	int ret = gp_build_id(name, id, sizeof(id));

	if (ret) {
		pr_err("cannot prove %s has the layout gpreempt was built for (from %s): %s, and no build id (%d); rebuild gpreempt against it\n",
		       name, GP_LAYOUT_FROM, no_btf, ret);
		return -ENOEXEC;
	}
	if (!GP_LAYOUT_BUILD_ID[0] || strcmp(id, GP_LAYOUT_BUILD_ID)) {
		pr_err("%s is not the binary gpreempt was built for: %s, build id %s; built for %s, build id %s; rebuild gpreempt against it\n",
		       name, no_btf, id, GP_LAYOUT_FROM,
		       GP_LAYOUT_BUILD_ID[0] ? GP_LAYOUT_BUILD_ID : "unknown");
		return -ENOEXEC;
	}
	pr_info("%s is the binary the layout was made from (%s, build id %s)\n", name, no_btf, id);
	return 0;
}

/**
 * gp_layout_check() - is the running KFD the one gpreempt was built for?
 * @owner: the module that provides KFD (amdgpu, or kfdsim in tests)
 *
 * Return: 0, or -ENOEXEC after one line naming the first difference (or why
 * the match cannot be proved), or another negative errno.
 */
int gp_layout_check(struct module *owner)
{
	int n = ARRAY_SIZE(gp_layout_items), bad, ret;
	struct gp_btf vmlinux, mod;
	void *vbuf, *mbuf;
	size_t vlen, mlen;
	char path[96], why[256];
	ktime_t t0 = ktime_get();

	snprintf(path, sizeof(path), "/sys/kernel/btf/%s", owner->name);
	mbuf = gp_read_file(path, &mlen);
	if (IS_ERR(mbuf)) {
		if (PTR_ERR(mbuf) == -ENOENT)
			return gp_layout_check_build_id(owner->name, "no BTF");
		snprintf(why, sizeof(why), "%s unreadable (%ld)", path, PTR_ERR(mbuf));
		return gp_layout_check_build_id(owner->name, why);
	}
	vbuf = gp_read_file("/sys/kernel/btf/vmlinux", &vlen);
	if (IS_ERR(vbuf)) {
		kvfree(mbuf);
		if (PTR_ERR(vbuf) == -ENOENT)
			return gp_layout_check_build_id(owner->name, "no vmlinux BTF");
		snprintf(why, sizeof(why), "vmlinux BTF unreadable (%ld)", PTR_ERR(vbuf));
		return gp_layout_check_build_id(owner->name, why);
	}
	ret = gp_btf_open(&vmlinux, vbuf, vlen, NULL);
	if (!ret) {
		ret = gp_btf_open(&mod, mbuf, mlen, &vmlinux);
		if (ret)
			gp_btf_close(&vmlinux);
	}
	if (ret) {
		kvfree(vbuf);
		kvfree(mbuf);
		snprintf(why, sizeof(why), "%s (%d)", ret == -EPROTO ?
			 "BTF newer than gpreempt reads" : "unreadable BTF", ret);
		return gp_layout_check_build_id(owner->name, why);
	}
	why[0] = '\0';
	bad = gp_btf_verify(&mod, gp_layout_items, n, why, sizeof(why));
	gp_btf_close(&mod);
	gp_btf_close(&vmlinux);
	kvfree(vbuf);
	kvfree(mbuf);
	if (bad) {
		pr_err("%s does not have the layout gpreempt was built for (from %s): %s (%d of %d items differ); rebuild gpreempt against it\n",
		       owner->name, GP_LAYOUT_FROM, why, bad, n);
		return -ENOEXEC;
	}
	pr_info("%s has the layout gpreempt was built for: %d items checked against its BTF in %lld us\n",
		owner->name, n, ktime_us_delta(ktime_get(), t0));
	return 0;
}
