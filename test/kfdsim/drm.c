// SPDX-License-Identifier: GPL-2.0
/*
 * drm.c - a DRM device named "amdgpu" per simulated GPU, so that the real
 * libdrm_amdgpu takes kfdsim's render nodes: amdgpu_device_initialize()
 * wants DRM version 3.x, AMDGPU_INFO_ACCEL_WORKING, AMDGPU_INFO_DEV_INFO and
 * GB_ADDR_CONFIG (libdrm's amdgpu_device.c and amdgpu_gpu_info.c), and
 * amdgpu_device_initialize() tells two devices apart by their primary
 * (card) node, found through sysfs, so each device has a real parent:
 * a platform device, a bus libdrm's drmParseSubsystemType() knows.
 *
 * DRM chooses the minors; the topology's drm_render_minor reads the one it
 * chose.  The file operations are DRM's, with kfd.c's buffer mmap, and
 * ACQUIRE_VM asks ks_drm_file_dev() whose file it was given.  DRM_AMDGPU_INFO
 * is the one ioctl: three queries, every other one -EINVAL; the other
 * amdgpu ioctls are -EINVAL.  Each query and each refusal is counted
 * (debugfs kfdsim/drm_ioctls).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/minmax.h>
#include <linux/platform_device.h>
#include <linux/seq_file.h>
#include <linux/uaccess.h>
#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_ioctl.h>
#include <uapi/drm/amdgpu_drm.h>
#include "kfdsim.h"

/* amdgpu_drv.c:124-126 of 6.12 (7.3 says 3.64): libdrm wants 3.x */
#define KS_DRM_MAJOR 3
#define KS_DRM_MINOR 61

/* gfx 9.4.1 (MI100): what amdgpu tells of it */
#define KS_CHIP_REV 1
#define KS_EXTERNAL_REV (KS_CHIP_REV + 0x32)	/* soc15.c:1125 */
#define KS_GB_ADDR_CONFIG_REG 0x263e		/* mmGB_ADDR_CONFIG, GC base 0 */
#define KS_GPU_COUNTER_KHZ 1000000		/* GET_CLOCK_COUNTERS: ns, 1 GHz */
#define KS_ENGINE_KHZ (1502 * 1000)		/* topology max_engine_clk_fcompute */

/* amdgpu_vm.h:168-182, amdgpu_gmc.h:35-36; gmc_v9_0.c:2059 makes 48 bits */
#define KS_VA_BOTTOM BIT_ULL(16)
#define KS_VA_TOP (BIT_ULL(16) + (2ULL << 20) + (2ULL << 20))	/* trap, seq64, CSA */
#define KS_VM_SIZE (BIT_ULL(48) - KS_VA_TOP)
#define KS_HOLE_START 0x0000800000000000ULL
#define KS_HOLE_END 0xffff800000000000ULL

struct ks_drm {
	struct platform_device *pdev;
	struct drm_device *drm;
	bool registered;
};

static struct ks_drm ks_drms[KS_MAX_DEVS];

/* DRM_AMDGPU_INFO by query (the last slot: queries past it), refusals, other ioctls */
#define KS_DRM_QUERIES 128
static atomic64_t ks_drm_queries[KS_DRM_QUERIES + 1];
static atomic64_t ks_drm_refused;
static atomic64_t ks_drm_others[DRM_COMMAND_END - DRM_COMMAND_BASE];

/* The kfdsim device of @drm, or -1. */
static int ks_drm_index(struct drm_device *drm)
{
	unsigned int i;

	for (i = 0; i < ks_param.ndev; i++)
		if (ks_drms[i].drm == drm)
			return i;
	return -1;
}

/* amdgpu_kms.c:845-978: what libdrm's amdgpu_query_gpu_info_init() keeps */
static int ks_drm_dev_info(void __user *out, u32 size)
{
	struct drm_amdgpu_info_device *di;
	unsigned int se, per_se = ks_param.num_cu / ks_param.num_se;
	int ret;

	di = kzalloc(sizeof(*di), GFP_KERNEL);
	if (!di)
		return -ENOMEM;
	di->device_id = KS_DEVICE_ID;
	di->chip_rev = KS_CHIP_REV;
	di->external_rev = KS_EXTERNAL_REV;
	di->pci_rev = KS_CHIP_REV;
	di->family = AMDGPU_FAMILY_AI;
	di->num_shader_engines = ks_param.num_se;
	di->num_shader_arrays_per_engine = 1;	/* topology: one array per engine */
	di->gpu_counter_freq = KS_GPU_COUNTER_KHZ;
	di->max_engine_clock = KS_ENGINE_KHZ;
	di->max_memory_clock = 1200 * 1000;
	di->num_hw_gfx_contexts = 8;		/* gfx_v9_0.c:2063 */
	di->virtual_address_offset = KS_VA_BOTTOM;
	di->virtual_address_max = min(KS_VM_SIZE, KS_HOLE_START);
	di->high_va_offset = KS_HOLE_END;
	di->high_va_max = KS_HOLE_END | KS_VM_SIZE;
	di->virtual_address_alignment = max_t(u32, PAGE_SIZE, 4096);
	di->pte_fragment_size = (1 << 9) * 4096;	/* fragment_size 9 */
	di->gart_page_size = max_t(u32, PAGE_SIZE, 4096);
	di->cu_active_number = ks_param.num_cu;
	di->cu_ao_mask = 0;
	/* gfx_v9_0.c:7859: SE i's array 0 is bitmap[i % 4][i / 4] */
	for (se = 0; se < ks_param.num_se; se++)
		di->cu_bitmap[se % 4][se / 4] = per_se >= 32 ? ~0U : BIT(per_se) - 1;
	di->vram_type = AMDGPU_VRAM_TYPE_HBM;
	di->vram_bit_width = 4096;
	di->wave_front_size = 64;
	di->num_shader_visible_vgprs = 256;
	di->num_cu_per_sh = per_se;
	di->num_tcc_blocks = 16;
	ret = copy_to_user(out, di, min_t(size_t, size, sizeof(*di))) ? -EFAULT : 0;
	kfree(di);
	return ret;
}

/*
 * amdgpu_kms.c:789-843 with soc15.c's allowed list (soc15.c:376, the cached
 * value :404, the one GET_TILE_CONFIG gives): GB_ADDR_CONFIG is the one
 * register kfdsim has, all that libdrm reads of an AI-family device.
 * Another offset is -EFAULT, as there.
 */
static int ks_drm_read_mmr(struct drm_amdgpu_info *info, void __user *out, u32 size)
{
	u32 se = info->read_mmr_reg.instance >> AMDGPU_INFO_MMR_SE_INDEX_SHIFT &
		 AMDGPU_INFO_MMR_SE_INDEX_MASK;
	u32 sh = info->read_mmr_reg.instance >> AMDGPU_INFO_MMR_SH_INDEX_SHIFT &
		 AMDGPU_INFO_MMR_SH_INDEX_MASK;
	u32 i, val = KS_GB_ADDR_CONFIG;

	/* AMDGPU_GFX_MAX_SE 4 and AMDGPU_GFX_MAX_SH_PER_SE 2 (amdgpu_gfx.h) */
	if ((se != AMDGPU_INFO_MMR_SE_INDEX_MASK && se >= 4) ||
	    (sh != AMDGPU_INFO_MMR_SH_INDEX_MASK && sh >= 2) || info->read_mmr_reg.count > 128)
		return -EINVAL;
	for (i = 0; i < info->read_mmr_reg.count; i++)
		if (info->read_mmr_reg.dword_offset + i != KS_GB_ADDR_CONFIG_REG)
			return -EFAULT;
	/* min(size, count * 4) bytes, count <= 1 here */
	return copy_to_user(out, &val, min(size, info->read_mmr_reg.count * 4)) ? -EFAULT : 0;
}

static int ks_drm_info(struct drm_device *drm, void *data, struct drm_file *filp)
{
	struct drm_amdgpu_info *info = data;
	void __user *out = u64_to_user_ptr(info->return_pointer);
	u32 size = info->return_size, one = 1;
	int ret, dev = ks_drm_index(drm);

	atomic64_inc(&ks_drm_queries[min_t(u32, info->query, KS_DRM_QUERIES)]);
	if (dev < 0 || !size || !info->return_pointer) {	/* amdgpu_kms.c:584 */
		ret = -EINVAL;
		goto out;
	}
	switch (info->query) {
	case AMDGPU_INFO_ACCEL_WORKING:		/* amdgpu_kms.c:588 */
		ret = copy_to_user(out, &one, min(size, 4u)) ? -EFAULT : 0;
		break;
	case AMDGPU_INFO_DEV_INFO:
		ret = ks_drm_dev_info(out, size);
		break;
	case AMDGPU_INFO_READ_MMR_REG:
		ret = ks_drm_read_mmr(info, out, size);
		break;
	default:				/* amdgpu_kms.c:1283 */
		ret = -EINVAL;
	}
out:
	if (ret)
		atomic64_inc(&ks_drm_refused);
	return ret;
}

/* amdgpu's other ioctls: known to DRM (sizes, render-node access), refused, counted */
#define KS_DRM_REFUSE(name)							\
static int ks_drm_##name(struct drm_device *drm, void *data, struct drm_file *filp) \
{									\
	atomic64_inc(&ks_drm_others[DRM_AMDGPU_##name]);		\
	atomic64_inc(&ks_drm_refused);					\
	return -EINVAL;							\
}

KS_DRM_REFUSE(GEM_CREATE)
KS_DRM_REFUSE(GEM_MMAP)
KS_DRM_REFUSE(CTX)
KS_DRM_REFUSE(BO_LIST)
KS_DRM_REFUSE(CS)
KS_DRM_REFUSE(GEM_METADATA)
KS_DRM_REFUSE(GEM_WAIT_IDLE)
KS_DRM_REFUSE(GEM_VA)
KS_DRM_REFUSE(WAIT_CS)
KS_DRM_REFUSE(GEM_OP)
KS_DRM_REFUSE(GEM_USERPTR)
KS_DRM_REFUSE(WAIT_FENCES)
KS_DRM_REFUSE(VM)
KS_DRM_REFUSE(FENCE_TO_HANDLE)
KS_DRM_REFUSE(SCHED)

#define KS_DRM_IOCTL(name, fn) DRM_IOCTL_DEF_DRV(AMDGPU_##name, fn, DRM_RENDER_ALLOW)
static const struct drm_ioctl_desc ks_drm_ioctls[] = {
	KS_DRM_IOCTL(GEM_CREATE, ks_drm_GEM_CREATE),
	KS_DRM_IOCTL(GEM_MMAP, ks_drm_GEM_MMAP),
	KS_DRM_IOCTL(CTX, ks_drm_CTX),
	KS_DRM_IOCTL(BO_LIST, ks_drm_BO_LIST),
	KS_DRM_IOCTL(CS, ks_drm_CS),
	KS_DRM_IOCTL(INFO, ks_drm_info),
	KS_DRM_IOCTL(GEM_METADATA, ks_drm_GEM_METADATA),
	KS_DRM_IOCTL(GEM_WAIT_IDLE, ks_drm_GEM_WAIT_IDLE),
	KS_DRM_IOCTL(GEM_VA, ks_drm_GEM_VA),
	KS_DRM_IOCTL(WAIT_CS, ks_drm_WAIT_CS),
	KS_DRM_IOCTL(GEM_OP, ks_drm_GEM_OP),
	KS_DRM_IOCTL(GEM_USERPTR, ks_drm_GEM_USERPTR),
	KS_DRM_IOCTL(WAIT_FENCES, ks_drm_WAIT_FENCES),
	KS_DRM_IOCTL(VM, ks_drm_VM),
	KS_DRM_IOCTL(FENCE_TO_HANDLE, ks_drm_FENCE_TO_HANDLE),
	KS_DRM_IOCTL(SCHED, ks_drm_SCHED),
};

static const struct file_operations ks_drm_fops = {
	.owner = THIS_MODULE,
	.open = drm_open,
	.release = drm_release,
	.unlocked_ioctl = drm_ioctl,
	.compat_ioctl = drm_compat_ioctl,
	.poll = drm_poll,
	.read = drm_read,
	.mmap = ks_render_mmap,		/* libhsakmt maps VRAM and GTT buffers here */
	.llseek = noop_llseek,
#ifdef FOP_UNSIGNED_OFFSET
	/* 6.12+ drm_open_helper() refuses fops without it (DRM_GEM_FOPS has it) */
	.fop_flags = FOP_UNSIGNED_OFFSET,
#endif
};

static const struct drm_driver ks_drm_driver = {
	.driver_features = DRIVER_RENDER,
	.ioctls = ks_drm_ioctls,
	.num_ioctls = ARRAY_SIZE(ks_drm_ioctls),
	.fops = &ks_drm_fops,
	.name = "amdgpu",
	.desc = "AMD GPU (kfdsim)",
#ifdef KS_DRM_DATE
	.date = "20150101",	/* amdgpu's DRIVER_DATE, before 6.14 dropped it */
#endif
	.major = KS_DRM_MAJOR,
	.minor = KS_DRM_MINOR,
};

/**
 * ks_drm_file_dev() - the kfdsim device whose DRM file @f is, for ACQUIRE_VM
 * @f: a file the caller holds
 *
 * Return: the device index, or -1 if @f is no kfdsim DRM file.
 */
int ks_drm_file_dev(struct file *f)
{
	struct drm_file *df;

	if (f->f_op != &ks_drm_fops)
		return -1;
	df = f->private_data;
	return ks_drm_index(df->minor->dev);
}

/**
 * ks_drm_render_minor() - the render minor DRM gave device @dev
 * @dev: kfdsim device index, registered
 *
 * Return: the minor, /dev/dri/renderD<minor>.
 */
unsigned int ks_drm_render_minor(unsigned int dev)
{
	return ks_drms[dev].drm->render->index;
}

static int ks_drm_calls_show(struct seq_file *m, void *unused)
{
	static const char * const names[KS_DRM_QUERIES] = {
		[AMDGPU_INFO_ACCEL_WORKING] = "ACCEL_WORKING",
		[AMDGPU_INFO_DEV_INFO] = "DEV_INFO",
		[AMDGPU_INFO_READ_MMR_REG] = "READ_MMR_REG",
	};
	unsigned int i;
	u64 n;

	for (i = 0; i <= KS_DRM_QUERIES; i++) {
		n = atomic64_read(&ks_drm_queries[i]);
		if (!n)
			continue;
		if (i == KS_DRM_QUERIES)
			seq_printf(m, "INFO.0x%x+ %llu\n", i, n);
		else if (names[i])
			seq_printf(m, "INFO.%s %llu\n", names[i], n);
		else
			seq_printf(m, "INFO.0x%02x %llu\n", i, n);
	}
	for (i = 0; i < ARRAY_SIZE(ks_drm_others); i++) {
		n = atomic64_read(&ks_drm_others[i]);
		if (n)
			seq_printf(m, "0x%02x %llu\n", i, n);
	}
	seq_printf(m, "refused %lld\n", atomic64_read(&ks_drm_refused));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(ks_drm_calls);

/**
 * ks_drm_exit() - unregister the DRM devices and their parents
 */
void ks_drm_exit(void)
{
	unsigned int i;

	for (i = 0; i < ks_param.ndev; i++) {
		struct ks_drm *d = &ks_drms[i];

		if (d->registered)
			drm_dev_unregister(d->drm);
		if (d->drm)
			drm_dev_put(d->drm);
		if (d->pdev)
			platform_device_unregister(d->pdev);
		memset(d, 0, sizeof(*d));
	}
}

/**
 * ks_drm_init() - a platform device and a DRM device ("amdgpu") per
 * simulated GPU, /dev/dri/card<N> and /dev/dri/renderD<minor>
 * @debugfs: kfdsim's debugfs directory, for drm_ioctls
 *
 * Return: 0 or a negative errno, with nothing left registered.
 */
int ks_drm_init(struct dentry *debugfs)
{
	unsigned int i;
	int ret;

	for (i = 0; i < ks_param.ndev; i++) {
		struct ks_drm *d = &ks_drms[i];

		d->pdev = platform_device_register_simple("kfdsim-gpu", i, NULL, 0);
		if (IS_ERR(d->pdev)) {
			ret = PTR_ERR(d->pdev);
			d->pdev = NULL;
			goto err;
		}
		d->drm = drm_dev_alloc(&ks_drm_driver, &d->pdev->dev);
		if (IS_ERR(d->drm)) {
			ret = PTR_ERR(d->drm);
			d->drm = NULL;
			goto err;
		}
		ret = drm_dev_register(d->drm, 0);
		if (ret)
			goto err;
		d->registered = true;
	}
	debugfs_create_file("drm_ioctls", 0444, debugfs, NULL, &ks_drm_calls_fops);
	return 0;

err:
	ks_drm_exit();
	return ret;
}
