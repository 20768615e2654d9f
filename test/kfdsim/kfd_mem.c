// SPDX-License-Identifier: GPL-2.0
/*
 * kfd_mem.c - KFD's VRAM accounting and the AVAILABLE_MEMORY ioctl
 * (hipMemGetInfo; ggml sizes its offload with it), after amdgpu's
 * amdgpu_amdkfd_reserve_mem_limit(), amdgpu_amdkfd_unreserve_mem_limit()
 * and amdgpu_amdkfd_get_available_memory() (6.12 amdgpu_amdkfd_gpuvm.c:
 * 169-248, :250-290, :1670-1710) and kfd_ioctl_get_available_memory()
 * (6.12 kfd_chardev.c:1038-1050).
 *
 * Each device has the 1 GiB VRAM bank its topology advertises.  A VRAM
 * ALLOC_MEMORY_OF_GPU reserves its page-aligned size (vram_used) and that
 * size rounded up to 2 MiB (vram_used_aligned, VRAM_AVAILABLITY_ALIGN) at
 * the allocation, and gives both back when the buffer is freed.  An
 * allocation that would take vram_used past the bank less the page-table
 * reserve fails with -ENOMEM, as amdgpu's.  AVAILABLE_MEMORY answers the
 * bank less vram_used_aligned less that reserve, rounded down to 2 MiB.
 * The page-table reserve is ESTIMATE_PT_SIZE(amdgpu_amdkfd_total_mem_size):
 * the larger of 8 MiB (AMDGPU_VM_RESERVED_VRAM) and 1/16384 of the free
 * RAM at the first use plus every device's VRAM (amdgpu_amdkfd.c:53-54,
 * :229).  Not modelled: pinned VRAM (vram_pin_size: nothing is pinned for
 * display here), RAS-retired pages, GTT and userptr limits (system_mem,
 * ttm_mem: they never change AVAILABLE_MEMORY on a dGPU), partitions.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mm.h>
#include <linux/seq_file.h>
#include <linux/sizes.h>
#include <linux/spinlock.h>
#include <uapi/linux/kfd_ioctl.h>
#include "kfdsim.h"

#define KS_VRAM_AVAIL_ALIGN SZ_2M	/* VRAM_AVAILABLITY_ALIGN */
#define KS_VM_RESERVED_VRAM SZ_8M	/* AMDGPU_VM_RESERVED_VRAM */

/* kfd_mem_limit.mem_limit_lock: the counters below */
static DEFINE_SPINLOCK(ks_mem_lock);
static u64 ks_vram_used[KS_MAX_DEVS];
static u64 ks_vram_used_aligned[KS_MAX_DEVS];
static u64 ks_reserved_for_pt;
static atomic64_t ks_vram_refused;	/* VRAM allocations past the bank */
static atomic64_t ks_avail_refused;	/* AVAILABLE_MEMORY of a bad gpu_id */

/* ESTIMATE_PT_SIZE(amdgpu_amdkfd_total_mem_size), fixed at the first use. */
static u64 ks_pt_reserve_locked(void)
{
	struct sysinfo si;
	u64 total;

	lockdep_assert_held(&ks_mem_lock);
	if (!ks_reserved_for_pt) {
		si_meminfo(&si);
		total = (u64)(si.freeram - si.freehigh) * si.mem_unit +
			(u64)ks_param.ndev * KS_VRAM_SIZE;
		ks_reserved_for_pt = max_t(u64, total >> 14, KS_VM_RESERVED_VRAM);
	}
	return ks_reserved_for_pt;
}

/**
 * ks_kfd_mem_reserve() - amdgpu_amdkfd_reserve_mem_limit() of a new buffer
 * @dev: kfdsim device index
 * @size: the buffer's page-aligned size
 * @flags: its KFD_IOC_ALLOC_MEM_FLAGS_*; only VRAM is accounted
 *
 * Return: 0, or -ENOMEM when the bank cannot hold it.
 */
int ks_kfd_mem_reserve(int dev, u64 size, u32 flags)
{
	int ret = 0;

	if ((flags & KFD_IOC_ALLOC_MEM_FLAGS_GTT) || !(flags & KFD_IOC_ALLOC_MEM_FLAGS_VRAM))
		return 0;
	spin_lock(&ks_mem_lock);
	if (ks_vram_used[dev] + size > KS_VRAM_SIZE - ks_pt_reserve_locked()) {
		ret = -ENOMEM;
		atomic64_inc(&ks_vram_refused);
	} else {
		ks_vram_used[dev] += size;
		ks_vram_used_aligned[dev] += ALIGN(size, KS_VRAM_AVAIL_ALIGN);
	}
	spin_unlock(&ks_mem_lock);
	return ret;
}

/**
 * ks_kfd_mem_unreserve() - amdgpu_amdkfd_unreserve_mem_limit() of a freed
 * buffer
 * @dev: kfdsim device index
 * @size: what ks_kfd_mem_reserve() reserved for it
 * @flags: its KFD_IOC_ALLOC_MEM_FLAGS_*
 */
void ks_kfd_mem_unreserve(int dev, u64 size, u32 flags)
{
	if ((flags & KFD_IOC_ALLOC_MEM_FLAGS_GTT) || !(flags & KFD_IOC_ALLOC_MEM_FLAGS_VRAM))
		return;
	spin_lock(&ks_mem_lock);
	ks_vram_used[dev] -= size;
	ks_vram_used_aligned[dev] -= ALIGN(size, KS_VRAM_AVAIL_ALIGN);
	WARN_ONCE((s64)ks_vram_used[dev] < 0, "kfdsim: dev%d VRAM accounting unbalanced\n", dev);
	spin_unlock(&ks_mem_lock);
}

/*
 * kfd_ioctl_get_available_memory(): a device of the caller's process
 * (kfd_lock_pdd_by_id(), under p->mutex), bound to it or not; an unknown
 * gpu_id is -EINVAL.
 */
int ks_kfd_available_memory(struct file *filp, struct kfd_process *p, void *data)
{
	struct kfd_ioctl_get_available_memory_args *args = data;
	u32 dev = args->gpu_id - KS_GPU_ID(0);
	s64 avail;

	mutex_lock(&p->mutex);
	if (dev >= ks_param.ndev || dev >= p->n_pdds || !p->pdds[dev]) {
		mutex_unlock(&p->mutex);
		atomic64_inc(&ks_avail_refused);
		pr_warn_ratelimited("/dev/kfd: pid %d: AVAILABLE_MEMORY of unknown gpu_id 0x%x refused\n",
				    task_tgid_nr(current), args->gpu_id);
		return -EINVAL;
	}
	spin_lock(&ks_mem_lock);
	avail = (s64)KS_VRAM_SIZE - ks_vram_used_aligned[dev] - ks_pt_reserve_locked();
	spin_unlock(&ks_mem_lock);
	mutex_unlock(&p->mutex);
	args->available = avail < 0 ? 0 : ALIGN_DOWN(avail, KS_VRAM_AVAIL_ALIGN);
	return 0;
}

/**
 * ks_kfd_mem_stats_show() - the memory lines of debugfs stats
 * @m: seq file
 *
 * kfd_vram_used (bytes of VRAM buffers, all devices), kfd_vram_refused
 * (VRAM allocations past the bank), available_memory_refused
 * (AVAILABLE_MEMORY calls with a bad gpu_id).
 */
void ks_kfd_mem_stats_show(struct seq_file *m)
{
	u64 used = 0;
	int i;

	spin_lock(&ks_mem_lock);
	for (i = 0; i < KS_MAX_DEVS; i++)
		used += ks_vram_used[i];
	spin_unlock(&ks_mem_lock);
	seq_printf(m, "kfd_vram_used %llu\nkfd_vram_refused %lld\navailable_memory_refused %lld\n",
		   used, atomic64_read(&ks_vram_refused), atomic64_read(&ks_avail_refused));
}
