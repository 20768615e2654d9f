// SPDX-License-Identifier: GPL-2.0
/*
 * kfd.c - the real KFD user interface, after amdkfd's kfd_chardev.c, next
 * to kfdsim's private /dev/kfdsim: /dev/kfd (class "kfd", the ioctls of the
 * kernel's uapi/linux/kfd_ioctl.h, dispatched and size-checked as
 * kfd_ioctl() does), its sysfs topology (topology.c) and a DRM device per
 * simulated GPU (drm.c), whose render node libhsakmt opens and hands to
 * ACQUIRE_VM.  A /dev/kfd open is a KFD process like a /dev/kfdsim open
 * (the same one, for the same mm), so queues made through either meet the
 * same pqm/dqm code.
 *
 * Never next to amdgpu's KFD: if /dev/kfd, the kfd class or the amdgpu
 * module exists, kfdsim loads without them, and without its DRM devices,
 * and says so in one line.
 * Every ioctl issued on /dev/kfd is counted per number (debugfs
 * kfdsim/kfd_ioctls), implemented or not.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/device.h>
#include <linux/compat.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/mmu_notifier.h>
#include <linux/module.h>
#include <linux/namei.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <uapi/linux/kfd_ioctl.h>
#include "kfdsim.h"

/* kfd_priv.h: what /dev/kfd's mmap offsets encode */
#define KS_MMAP_TYPE_SHIFT 62
#define KS_MMAP_TYPE_MASK (0x3ULL << KS_MMAP_TYPE_SHIFT)
#define KS_MMAP_TYPE_DOORBELL (0x3ULL << KS_MMAP_TYPE_SHIFT)
#define KS_MMAP_TYPE_EVENTS (0x2ULL << KS_MMAP_TYPE_SHIFT)
#define KS_MMAP_TYPE_MMIO (0x0ULL << KS_MMAP_TYPE_SHIFT)
#define KS_MMAP_GPU_ID_SHIFT 46
#define KS_MMAP_GPU_ID_MASK (0xffffULL << KS_MMAP_GPU_ID_SHIFT)
#define KS_MMAP_GPU_ID(id) ((u64)(id) << KS_MMAP_GPU_ID_SHIFT)

/* kfd_flat_memory.c, gfx9: LDS and scratch apertures, the GPUVM range */
#define KS_LDS_BASE BIT_ULL(48)
#define KS_SCRATCH_BASE (2ULL << 48)
#define KS_APP_LIMIT(base) (((base) & 0xFFFFFFFF00000000ULL) | 0xFFFFFFFF)
#define KS_GPUVM_BASE BIT_ULL(16)		/* AMDGPU_VA_RESERVED_BOTTOM */
#define KS_GPUVM_LIMIT (0x0000800000000000ULL - 1)	/* below the GMC hole */

/* SOC15: a process's doorbells on a device, 1024 of 8 bytes */
#define KS_DOORBELL_SLICE (1024 * sizeof(u64))
#define KS_MAX_BO_SIZE SZ_64M	/* VRAM and GTT buffers are kernel memory */

/*
 * A buffer object of ALLOC_MEMORY_OF_GPU (kfd_process's ks_bos).  VRAM and
 * GTT ones are kfdsim driver buffers (mmap.c), mmapped through the render
 * node at their offset, an index of ks_bo_offsets; the CP reaches queue
 * memory in them through the buffer, as in user memory (USERPTR) by
 * pinning it.
 */
struct ks_bo {
	u64 va;
	u64 uaddr;		/* USERPTR: the user memory behind va */
	u64 size;
	u32 flags;
	u32 dev;		/* kfdsim device index */
	unsigned long mapped;	/* devices it is mapped to */
	struct ks_buf *buf;	/* VRAM, GTT */
	u32 offset_idx;		/* in ks_bo_offsets */
	/* While mapped to a GPU: in p->ks_vm, the kernel address of va */
	struct list_head vm_node;
	void *kaddr;
	struct page **pages;	/* USERPTR: pinned while mapped */
	int npages;
	/* USERPTR: amdgpu_hmm_register()'s notifier on [uaddr, uaddr + size) */
	struct mmu_interval_notifier notifier;
	struct kfd_process *p;
};

/* The render nodes' mmap offsets (>> PAGE_SHIFT): buffers, a reference each. */
static DEFINE_XARRAY_ALLOC1(ks_bo_offsets);

#define KS_HANDLE(dev, idx) (((u64)KS_GPU_ID(dev) << 32) | (idx))

typedef int ks_kfd_fn(struct file *filp, struct kfd_process *p, void *data);

struct ks_kfd_ioctl {
	unsigned int cmd;
	ks_kfd_fn *fn;
};

enum ks_kfd_state { KS_KFD_OFF, KS_KFD_ON, KS_KFD_REFUSED };

static enum ks_kfd_state ks_kfd_state;
static int ks_kfd_major = -1;
static struct device *ks_kfd_device;
static struct class ks_kfd_class = {
	.name = "kfd",
};

static atomic64_t ks_kfd_calls[256];	/* by _IOC_NR */
static struct page *ks_mmio_page[KS_MAX_DEVS];	/* the remapped HDP flush page */

/* The device with topology gpu_id @gpu_id, or -1. */
static int ks_dev_index(u32 gpu_id)
{
	u32 i = gpu_id - KS_GPU_ID(0);

	return i < ks_param.ndev ? i : -1;
}

/* kfd_process_device_data_by_id(), under p->mutex. */
static struct kfd_process_device *ks_pdd_by_id(struct kfd_process *p, u32 gpu_id)
{
	int i = ks_dev_index(gpu_id);

	return i >= 0 && i < p->n_pdds ? p->pdds[i] : NULL;
}

/* ---- the ioctls ---- */

/* kfd_ioctl_smi_events(): a device of the caller's process. */
static int ks_kfd_smi_events(struct file *filp, struct kfd_process *p, void *data)
{
	struct kfd_ioctl_smi_events_args *args = data;
	bool ok;

	mutex_lock(&p->mutex);
	ok = ks_pdd_by_id(p, args->gpuid);
	mutex_unlock(&p->mutex);
	if (!ok)
		return -EINVAL;
	return ks_smi_open(ks_dev_index(args->gpuid), &args->anon_fd);
}

static int ks_kfd_get_version(struct file *filp, struct kfd_process *p, void *data)
{
	struct kfd_ioctl_get_version_args *args = data;

	args->major_version = KFD_IOCTL_MAJOR_VERSION;
	args->minor_version = KFD_IOCTL_MINOR_VERSION;
	return 0;
}

static int ks_kfd_set_memory_policy(struct file *filp, struct kfd_process *p, void *data)
{
	struct kfd_ioctl_set_memory_policy_args *args = data;
	int ret = 0;

	if ((args->default_policy != KFD_IOC_CACHE_POLICY_COHERENT &&
	     args->default_policy != KFD_IOC_CACHE_POLICY_NONCOHERENT) ||
	    (args->alternate_policy != KFD_IOC_CACHE_POLICY_COHERENT &&
	     args->alternate_policy != KFD_IOC_CACHE_POLICY_NONCOHERENT))
		return -EINVAL;
	mutex_lock(&p->mutex);
	/* gfx9 has no apertures to program: the policy only has to be valid. */
	if (!ks_pdd_by_id(p, args->gpu_id))
		ret = -EINVAL;
	mutex_unlock(&p->mutex);
	return ret;
}

static int ks_kfd_get_clock_counters(struct file *filp, struct kfd_process *p, void *data)
{
	struct kfd_ioctl_get_clock_counters_args *args = data;

	/* The simulated GPU counts model time in ns, as kfdsim's CP does. */
	args->gpu_clock_counter = ks_dev_index(args->gpu_id) >= 0 ? ktime_get_ns() : 0;
	args->cpu_clock_counter = ktime_get_raw_ns();
	args->system_clock_counter = ktime_get_boottime_ns();
	args->system_clock_freq = 1000000000;
	return 0;
}

static void ks_apertures(struct kfd_process_device_apertures *pa, unsigned int dev)
{
	pa->gpu_id = KS_GPU_ID(dev);
	pa->lds_base = KS_LDS_BASE;
	pa->lds_limit = KS_APP_LIMIT(KS_LDS_BASE);
	pa->scratch_base = KS_SCRATCH_BASE;
	pa->scratch_limit = KS_APP_LIMIT(KS_SCRATCH_BASE);
	pa->gpuvm_base = KS_GPUVM_BASE;
	pa->gpuvm_limit = KS_GPUVM_LIMIT;
}

static int ks_kfd_get_process_apertures(struct file *filp, struct kfd_process *p, void *data)
{
	struct kfd_ioctl_get_process_apertures_args *args = data;
	u32 i;

	mutex_lock(&p->mutex);
	for (i = 0; i < p->n_pdds && i < NUM_OF_SUPPORTED_GPUS; i++)
		ks_apertures(&args->process_apertures[i], i);
	args->num_of_nodes = i;
	mutex_unlock(&p->mutex);
	return 0;
}

static int ks_kfd_get_process_apertures_new(struct file *filp, struct kfd_process *p,
					    void *data)
{
	struct kfd_ioctl_get_process_apertures_new_args *args = data;
	struct kfd_process_device_apertures *pa;
	u32 i, n;
	int ret;

	if (!args->num_of_nodes) {
		args->num_of_nodes = p->n_pdds;
		return 0;
	}
	/* kfd_topology_get_num_devices(): the CPU node counts too */
	if (args->num_of_nodes > ks_param.ndev + 1)
		return -EINVAL;
	n = min(args->num_of_nodes, p->n_pdds);
	pa = kcalloc(n, sizeof(*pa), GFP_KERNEL);
	if (!pa)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		ks_apertures(&pa[i], i);
	args->num_of_nodes = n;
	ret = copy_to_user(u64_to_user_ptr(args->kfd_process_device_apertures_ptr), pa,
			   n * sizeof(*pa)) ? -EFAULT : 0;
	kfree(pa);
	return ret;
}

static int ks_kfd_acquire_vm(struct file *filp, struct kfd_process *p, void *data)
{
	struct kfd_ioctl_acquire_vm_args *args = data;
	struct kfd_process_device *pdd;
	struct file *drm_file;
	int dev, ret = 0;

	drm_file = fget(args->drm_fd);
	if (!drm_file)
		return -EINVAL;
	mutex_lock(&p->mutex);
	pdd = ks_pdd_by_id(p, args->gpu_id);
	dev = ks_dev_index(args->gpu_id);
	/* amdgpu takes the VM of the device's own DRM file only */
	if (!pdd || ks_drm_file_dev(drm_file) != dev) {
		ret = -EINVAL;
	} else if (pdd->ks_drm_file) {
		ret = pdd->ks_drm_file == drm_file ? 0 : -EBUSY;
	} else {
		ret = ks_pdd_bind(pdd);	/* 6.17+: the device's PASID */
		if (!ret)
			pdd->ks_drm_file = drm_file;
	}
	mutex_unlock(&p->mutex);
	fput(drm_file);
	return ret;
}

/*
 * The GPU VM: what the simulated GPU reaches is what MAP_MEMORY_TO_GPU
 * mapped, as on the hardware.  A mapped VRAM or GTT buffer is reached
 * through its kernel mapping; a USERPTR one is pinned and vmapped while
 * mapped (amdgpu pins it too).  The CP looks addresses up, and uses what it
 * finds, under p->ks_vm_lock, so an unmap never pulls memory from under it.
 */
static int ks_vm_map(struct kfd_process *p, struct ks_bo *bo)
{
	unsigned long first = bo->uaddr;
	long got;

	if (bo->buf) {
		bo->kaddr = ks_buf_kaddr(bo->buf);
	} else if (bo->flags & KFD_IOC_ALLOC_MEM_FLAGS_USERPTR) {
		bo->npages = PAGE_ALIGN(bo->size) >> PAGE_SHIFT;
		bo->pages = kvcalloc(bo->npages, sizeof(*bo->pages), GFP_KERNEL);
		if (!bo->pages)
			return -ENOMEM;
		got = pin_user_pages_fast(first, bo->npages, FOLL_WRITE | FOLL_LONGTERM, bo->pages);
		if (got != bo->npages) {
			if (got > 0)
				unpin_user_pages(bo->pages, got);
			kvfree(bo->pages);
			bo->pages = NULL;
			return -EFAULT;
		}
		bo->kaddr = vmap(bo->pages, bo->npages, VM_MAP, PAGE_KERNEL);
		if (!bo->kaddr) {
			unpin_user_pages(bo->pages, bo->npages);
			kvfree(bo->pages);
			bo->pages = NULL;
			return -ENOMEM;
		}
	} else {
		return 0;	/* doorbells, MMIO: nothing the CP reads */
	}
	spin_lock(&p->ks_vm_lock);
	list_add(&bo->vm_node, &p->ks_vm);
	spin_unlock(&p->ks_vm_lock);
	return 0;
}

static void ks_vm_unmap(struct kfd_process *p, struct ks_bo *bo)
{
	if (!bo->kaddr)
		return;
	spin_lock(&p->ks_vm_lock);
	list_del(&bo->vm_node);
	spin_unlock(&p->ks_vm_lock);
	if (bo->pages) {
		vunmap(bo->kaddr);
		unpin_user_pages(bo->pages, bo->npages);
		kvfree(bo->pages);
		bo->pages = NULL;
	}
	bo->kaddr = NULL;
}

/**
 * ks_vm_kaddr_locked() - the kernel address of GPU-mapped memory
 * @p: process, p->ks_vm_lock held (valid until it is dropped)
 * @va: GPU (= CPU) virtual address
 * @len: bytes from @va, all in one buffer
 *
 * Return: the address, or NULL when [va, va + len) is not mapped.
 */
u64 *ks_vm_kaddr_locked(struct kfd_process *p, u64 va, u32 len)
{
	struct ks_bo *bo;

	lockdep_assert_held(&p->ks_vm_lock);
	if (va & 7)
		return NULL;
	/*
	 * No va + len: an address a process writes in a packet (a kernel
	 * descriptor, kernargs, a signal at 2^64 - 8) would wrap to a small
	 * end and pass, and the offset from the buffer would reach far outside it.
	 */
	list_for_each_entry(bo, &p->ks_vm, vm_node)
		if (va >= bo->va && len <= bo->size && va - bo->va <= bo->size - len)
			return bo->kaddr + (va - bo->va);
	return NULL;
}

/**
 * ks_vm_read64_locked() - read a u64 of GPU-mapped memory
 * @p: process, p->ks_vm_lock held
 * @va: address, 8-byte aligned
 * @val: the value
 *
 * Return: false when @va is not mapped.
 */
bool ks_vm_read64_locked(struct kfd_process *p, u64 va, u64 *val)
{
	u64 *k = ks_vm_kaddr_locked(p, va, 8);

	if (k)
		*val = READ_ONCE(*k);
	return k;
}

/**
 * ks_vm_mapped_locked() - whether an address is in GPU-mapped memory
 * @p: process, p->ks_vm_lock held
 * @va: address, any alignment
 *
 * Return: true when a buffer mapped to the GPU holds @va.
 */
bool ks_vm_mapped_locked(struct kfd_process *p, u64 va)
{
	struct ks_bo *bo;

	lockdep_assert_held(&p->ks_vm_lock);
	list_for_each_entry(bo, &p->ks_vm, vm_node)
		if (va >= bo->va && va < bo->va + bo->size)
			return true;
	return false;
}

/**
 * ks_vm_bytes_locked() - the kernel address of a byte range of GPU-mapped
 * memory
 * @p: process, p->ks_vm_lock held (valid until it is dropped)
 * @va: GPU virtual address, any alignment
 * @len: bytes from @va, all in one buffer
 *
 * Return: the address, or NULL when [va, va + len) is not in one buffer.
 */
void *ks_vm_bytes_locked(struct kfd_process *p, u64 va, u64 len)
{
	struct ks_bo *bo;

	lockdep_assert_held(&p->ks_vm_lock);
	list_for_each_entry(bo, &p->ks_vm, vm_node)
		if (va >= bo->va && len <= bo->size && va - bo->va <= bo->size - len)
			return (u8 *)bo->kaddr + (va - bo->va);
	return NULL;
}

/**
 * ks_vm_buffer_locked() - the GPU-mapped buffer that holds an address
 * @p: process, p->ks_vm_lock held (valid until it is dropped)
 * @va: GPU virtual address
 * @bo_va: the buffer's first GPU virtual address
 * @size: the buffer's size in bytes
 *
 * Return: the kernel address of the buffer's first byte, or NULL when no
 * buffer mapped to the GPU holds @va.
 */
void *ks_vm_buffer_locked(struct kfd_process *p, u64 va, u64 *bo_va, u64 *size)
{
	struct ks_bo *bo;

	lockdep_assert_held(&p->ks_vm_lock);
	list_for_each_entry(bo, &p->ks_vm, vm_node)
		if (va >= bo->va && va - bo->va < bo->size) {
			*bo_va = bo->va;
			*size = bo->size;
			return bo->kaddr;
		}
	return NULL;
}

/*
 * amdgpu_hmm_invalidate_hsa() (amdgpu_hmm.c:101-113; 7.3 :103-115): munmap,
 * madvise(MADV_DONTNEED), migration or compaction of a USERPTR range evicts
 * the whole process from inside the notifier, through the dqm's lock
 * (amdgpu_amdkfd_evict_userptr()).  A non-blockable range (the OOM reaper)
 * is refused, as amdgpu does.  amdgpu does not skip MMU_NOTIFY_RELEASE
 * (exit_mmap()), where kgd2kfd_quiesce_mm() still finds the process; here
 * the exit's eviction is left to the teardown, which drops every queue
 * anyway.  The pinned pages stay what the simulated GPU reads.
 */
static bool ks_bo_invalidate(struct mmu_interval_notifier *mni,
			     const struct mmu_notifier_range *range, unsigned long cur_seq)
{
	struct ks_bo *bo = container_of(mni, struct ks_bo, notifier);

	if (!mmu_notifier_range_blockable(range))
		return false;
	mmu_interval_set_seq(mni, cur_seq);
	if (range->event != MMU_NOTIFY_RELEASE)
		ks_kfd_evict_userptr_notify(bo->p);
	return true;
}

static const struct mmu_interval_notifier_ops ks_bo_notifier_ops = {
	.invalidate = ks_bo_invalidate,
};

static void ks_bo_free(struct kfd_process *p, struct ks_bo *bo)
{
	/* amdgpu_hmm_unregister() (amdgpu_amdkfd_gpuvm.c:1955; 7.3 :1985) */
	if (bo->notifier.mm)
		mmu_interval_notifier_remove(&bo->notifier);
	ks_vm_unmap(p, bo);
	if (bo->buf) {
		if (bo->offset_idx)
			ks_buf_put(xa_erase(&ks_bo_offsets, bo->offset_idx));
		ks_buf_put(bo->buf);
		ks_kfd_mem_unreserve(bo->dev, PAGE_ALIGN(bo->size), bo->flags);
	}
	kfree(bo);
}

/* The backing of a new buffer object; fills in its mmap_offset. */
static int ks_bo_back(struct ks_bo *bo, struct kfd_ioctl_alloc_memory_of_gpu_args *args)
{
	u32 f = args->flags;
	int ret;

	if (f & KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP) {
		if (args->size != PAGE_SIZE)
			return -EINVAL;
		args->mmap_offset = KS_MMAP_TYPE_MMIO | KS_MMAP_GPU_ID(args->gpu_id);
	} else if (f & KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL) {
		if (args->size != KS_DOORBELL_SLICE)
			return -EINVAL;
		args->mmap_offset = KS_MMAP_TYPE_DOORBELL | KS_MMAP_GPU_ID(args->gpu_id);
	} else if (f & KFD_IOC_ALLOC_MEM_FLAGS_USERPTR) {
		/*
		 * mmap_offset is the user address; amdgpu pins it when mapped,
		 * at the GPU VA va_addr.  ROCr's own allocations use the same
		 * address for both; memory registered later (the thunk's
		 * hsaKmtRegisterMemory: HIP's pinned host buffers) gets a
		 * GPU VA of the SVM aperture of its own.
		 */
		if (!PAGE_ALIGNED(args->mmap_offset) || !PAGE_ALIGNED(args->size) ||
		    !PAGE_ALIGNED(args->va_addr) ||
		    !access_ok(u64_to_user_ptr(args->mmap_offset), args->size))
			return -EINVAL;
		bo->uaddr = args->mmap_offset;
		/*
		 * init_user_pages() -> amdgpu_hmm_register() at the allocation
		 * (amdgpu_amdkfd_gpuvm.c:1060; 7.3 :1089), removed at the free.
		 */
		ret = mmu_interval_notifier_insert(&bo->notifier, current->mm, bo->uaddr,
						   args->size, &ks_bo_notifier_ops);
		if (ret) {
			bo->notifier.mm = NULL;
			return ret;
		}
	} else if (f & (KFD_IOC_ALLOC_MEM_FLAGS_VRAM | KFD_IOC_ALLOC_MEM_FLAGS_GTT)) {
		if (args->size > KS_MAX_BO_SIZE)
			return -ENOMEM;
		ret = ks_kfd_mem_reserve(bo->dev, PAGE_ALIGN(args->size), f);
		if (ret)
			return ret;
		bo->buf = ks_buf_alloc(PAGE_ALIGN(args->size));
		if (!bo->buf) {
			ks_kfd_mem_unreserve(bo->dev, PAGE_ALIGN(args->size), f);
			return -ENOMEM;
		}
		ks_buf_get(bo->buf);
		ret = xa_alloc(&ks_bo_offsets, &bo->offset_idx, bo->buf,
			       XA_LIMIT(1, (1U << 30) - 1), GFP_KERNEL);
		if (ret) {
			ks_buf_put(bo->buf);
			return ret;
		}
		args->mmap_offset = (u64)bo->offset_idx << PAGE_SHIFT;
	} else {
		return -EINVAL;
	}
	return 0;
}

static int ks_kfd_alloc_memory(struct file *filp, struct kfd_process *p, void *data)
{
	struct kfd_ioctl_alloc_memory_of_gpu_args *args = data;
	int dev = ks_dev_index(args->gpu_id);
	struct ks_bo *bo;
	u32 idx;
	int ret;

	if (dev < 0 || !args->size)
		return -EINVAL;
	bo = kzalloc(sizeof(*bo), GFP_KERNEL);
	if (!bo)
		return -ENOMEM;
	bo->va = args->va_addr;
	bo->size = args->size;
	bo->flags = args->flags;
	bo->dev = dev;
	bo->p = p;
	ret = ks_bo_back(bo, args);
	if (ret) {
		pr_warn_ratelimited("/dev/kfd: pid %d: ALLOC_MEMORY_OF_GPU flags %#x size %#llx va %#llx offset %#llx refused (%d)\n",
				    task_tgid_nr(current), args->flags, args->size, args->va_addr,
				    args->mmap_offset, ret);
		ks_bo_free(p, bo);
		return ret;
	}
	mutex_lock(&p->mutex);
	if (!p->pdds[dev]->ks_drm_file)
		ret = -ENODEV;	/* kfd_bind_process_to_device(): no VM yet */
	else
		ret = xa_alloc(&p->ks_bos, &idx, bo, xa_limit_31b, GFP_KERNEL);
	mutex_unlock(&p->mutex);
	if (ret) {
		ks_bo_free(p, bo);
		return ret;
	}
	args->handle = KS_HANDLE(dev, idx);
	return 0;
}

/* The handle's buffer, under p->mutex. */
static struct ks_bo *ks_bo_get(struct kfd_process *p, u64 handle)
{
	struct ks_bo *bo = xa_load(&p->ks_bos, (u32)handle);

	return bo && KS_HANDLE(bo->dev, (u32)handle) == handle ? bo : NULL;
}

/**
 * ks_kfd_bo_buf() - the memory of a VRAM or GTT buffer object, for the
 * kernel to use (kfd_process_device_translate_handle() + a kernel mapping)
 * @p: process
 * @handle: its handle, from ALLOC_MEMORY_OF_GPU
 * @min_size: at least this big
 *
 * Return: the buffer, with a reference for the caller, or ERR_PTR(-EINVAL).
 */
struct ks_buf *ks_kfd_bo_buf(struct kfd_process *p, u64 handle, u64 min_size)
{
	struct ks_buf *buf = ERR_PTR(-EINVAL);
	struct ks_bo *bo;

	mutex_lock(&p->mutex);
	bo = ks_bo_get(p, handle);
	if (bo && bo->buf && bo->size >= min_size) {
		buf = bo->buf;
		ks_buf_get(buf);
	}
	mutex_unlock(&p->mutex);
	if (IS_ERR(buf))
		pr_warn_ratelimited("/dev/kfd: no buffer of %llu bytes with handle 0x%llx\n",
				    min_size, handle);
	return buf;
}

static int ks_kfd_free_memory(struct file *filp, struct kfd_process *p, void *data)
{
	struct kfd_ioctl_free_memory_of_gpu_args *args = data;
	struct ks_bo *bo;

	mutex_lock(&p->mutex);
	bo = ks_bo_get(p, args->handle);
	if (bo)
		xa_erase(&p->ks_bos, (u32)args->handle);
	mutex_unlock(&p->mutex);
	if (!bo)
		return -EINVAL;
	ks_bo_free(p, bo);
	return 0;
}

/* MAP_MEMORY_TO_GPU and UNMAP_MEMORY_FROM_GPU: their args are the same. */
static int ks_kfd_map(struct kfd_process *p, void *data, bool map)
{
	struct kfd_ioctl_map_memory_to_gpu_args *args = data;
	struct ks_bo *bo;
	u32 *ids, i;
	int ret = 0;

	if (!args->n_devices || args->n_success > args->n_devices ||
	    args->n_devices > ks_param.ndev)
		return -EINVAL;
	ids = memdup_user(u64_to_user_ptr(args->device_ids_array_ptr),
			  args->n_devices * sizeof(u32));
	if (IS_ERR(ids))
		return PTR_ERR(ids);
	mutex_lock(&p->mutex);
	bo = ks_bo_get(p, args->handle);
	for (i = args->n_success; bo && i < args->n_devices; i++) {
		int dev = ks_dev_index(ids[i]);

		if (dev < 0) {
			ret = -EINVAL;
			break;
		}
		if (map && !bo->mapped) {
			ret = ks_vm_map(p, bo);
			if (ret)
				break;
		}
		if (map)
			__set_bit(dev, &bo->mapped);
		else
			__clear_bit(dev, &bo->mapped);
		if (!map && !bo->mapped)
			ks_vm_unmap(p, bo);
		args->n_success = i + 1;
	}
	if (!bo)
		ret = -EINVAL;
	mutex_unlock(&p->mutex);
	kfree(ids);
	return ret;
}

static int ks_kfd_map_memory(struct file *filp, struct kfd_process *p, void *data)
{
	return ks_kfd_map(p, data, true);
}

static int ks_kfd_unmap_memory(struct file *filp, struct kfd_process *p, void *data)
{
	return ks_kfd_map(p, data, false);
}

static struct ks_buf *ks_doorbells(struct kfd_process *p, int dev);

/*
 * An SDMA queue's engine reads its write offset from its doorbell (qid x 8
 * in the process's slice, as doorbell_offset says).  Without the slice (no
 * memory) the queue sees no work.
 */
static void ks_kfd_sdma_doorbell(struct kfd_process *p, int dev, unsigned int qid)
{
	struct ks_buf *b = ks_doorbells(p, dev);
	struct queue *q;

	if (!b) {
		pr_warn_ratelimited("/dev/kfd: SDMA queue %u: no doorbell page\n", qid);
		return;
	}
	mutex_lock(&p->mutex);
	q = pqm_get_user_queue(&p->pqm, qid);
	if (q)
		ks_sdma_attach(q, b, qid * sizeof(u64));
	else
		ks_buf_put(b);
	mutex_unlock(&p->mutex);
}

/* KFD_IOC_QUEUE_TYPE_* to kfdsim's; -1: not simulated */
static int ks_queue_type(u32 type)
{
	switch (type) {
	case KFD_IOC_QUEUE_TYPE_COMPUTE:
		return KFDSIM_QUEUE_TYPE_COMPUTE_PM4;
	case KFD_IOC_QUEUE_TYPE_COMPUTE_AQL:
		return KFDSIM_QUEUE_TYPE_COMPUTE_AQL;
	case KFD_IOC_QUEUE_TYPE_SDMA:
	case KFD_IOC_QUEUE_TYPE_SDMA_XGMI:
		return KFDSIM_QUEUE_TYPE_SDMA;
	default:
		return -1;
	}
}

/*
 * kfd_ioctl_create_queue(): the ring and the read/write pointers (for AQL,
 * amd_queue_t's read_dispatch_id and write_dispatch_id) are what the CP
 * uses; the EOP buffer and the CWSR save area are accepted, not used.
 * SDMA (and SDMA_XGMI) queues run SDMA v4 packets (sdma.c), the write
 * offset in bytes read from the queue's doorbell, as on gfx9.
 */
static int ks_kfd_create_queue(struct file *filp, struct kfd_process *p, void *data)
{
	struct kfd_ioctl_create_queue_args *args = data;
	int dev = ks_dev_index(args->gpu_id), type = ks_queue_type(args->queue_type);
	unsigned int qid;
	bool bound;
	int ret;

	if (dev < 0)
		return -EINVAL;
	if (type < 0)
		return -EINVAL;
	mutex_lock(&p->mutex);
	bound = p->pdds[dev]->ks_drm_file;
	mutex_unlock(&p->mutex);
	if (!bound)
		return -ESRCH;	/* kfd_bind_process_to_device() failed: no VM */
	if (args->ring_size < KFDSIM_MIN_RING_SIZE && is_power_of_2(args->ring_size))
		args->ring_size = KFDSIM_MIN_RING_SIZE;	/* KFD_MIN_QUEUE_RING_SIZE */
	ret = ks_queue_create(p, filp, dev, type, args->ring_base_address, args->ring_size,
			      args->read_pointer_address, args->write_pointer_address, 0, 0,
			      args->queue_percentage, args->queue_priority, true, &qid);
	if (ret)
		return ret;
	if (type == KFDSIM_QUEUE_TYPE_SDMA)
		ks_kfd_sdma_doorbell(p, dev, qid);
	args->queue_id = qid;
	/* SOC15: the doorbell's offset in the process's slice is included */
	args->doorbell_offset = KS_MMAP_TYPE_DOORBELL | KS_MMAP_GPU_ID(args->gpu_id) |
				(qid * sizeof(u64));
	return 0;
}

static int ks_kfd_destroy_queue(struct file *filp, struct kfd_process *p, void *data)
{
	struct kfd_ioctl_destroy_queue_args *args = data;
	int ret;

	mutex_lock(&p->mutex);
	ret = pqm_destroy_queue(&p->pqm, args->queue_id);
	mutex_unlock(&p->mutex);
	return ret;
}

static int ks_kfd_update_queue(struct file *filp, struct kfd_process *p, void *data)
{
	struct kfd_ioctl_update_queue_args *args = data;

	return ks_queue_update(p, args->queue_id, args->ring_base_address, args->ring_size,
			       args->queue_percentage, args->queue_priority);
}

/* kfd_ioctl_set_cu_mask(): pqm_update_mqd(), as the private interface does */
static int ks_kfd_set_cu_mask(struct file *filp, struct kfd_process *p, void *data)
{
	struct kfd_ioctl_set_cu_mask_args *args = data;

	return ks_queue_set_cu_mask(p, args->queue_id, args->num_cu_mask, args->cu_mask_ptr);
}

/* kfd_ioctl_set_scratch_backing_va(): HWS programs it; nothing to model */
static int ks_kfd_set_scratch_backing_va(struct file *filp, struct kfd_process *p, void *data)
{
	struct kfd_ioctl_set_scratch_backing_va_args *args = data;
	int dev = ks_dev_index(args->gpu_id), ret = 0;

	if (dev < 0)
		return -EINVAL;
	mutex_lock(&p->mutex);
	if (!p->pdds[dev]->ks_drm_file)
		ret = -ENODEV;	/* kfd_bind_process_to_device(): no VM yet */
	mutex_unlock(&p->mutex);
	return ret;
}

/*
 * kfd_ioctl_set_xnack_mode(): the gfx908 kfdsim shows has no XNACK, so the
 * mode stays off: a query says 0, turning it on is -EPERM, and any change
 * with queues is -EBUSY, as KFD.
 */
static int ks_kfd_set_xnack_mode(struct file *filp, struct kfd_process *p, void *data)
{
	struct kfd_ioctl_set_xnack_mode_args *args = data;
	int ret = 0;

	mutex_lock(&p->mutex);
	if (args->xnack_enabled < 0)
		args->xnack_enabled = 0;
	else if (!list_empty(&p->pqm.queues))
		ret = -EBUSY;
	else if (args->xnack_enabled)
		ret = -EPERM;
	mutex_unlock(&p->mutex);
	return ret;
}

/* kfd_ioctl_set_trap_handler(): the trap handler's TBA/TMA, never run here */
static int ks_kfd_set_trap_handler(struct file *filp, struct kfd_process *p, void *data)
{
	struct kfd_ioctl_set_trap_handler_args *args = data;
	int dev = ks_dev_index(args->gpu_id), ret = 0;

	if (dev < 0)
		return -EINVAL;
	mutex_lock(&p->mutex);
	if (!p->pdds[dev]->ks_drm_file)
		ret = -ESRCH;	/* kfd_bind_process_to_device() failed */
	mutex_unlock(&p->mutex);
	return ret;
}

/*
 * kfd_ioctl_get_tile_config(): amdgpu_amdkfd_get_tile_config() of a gfx9
 * part.  Its tile and macro-tile mode arrays (32 and 16 entries) are never
 * filled from GFX9 on, nor are banks and ranks; GB_ADDR_CONFIG is the value
 * gfx_v9_0 programs for 9.4.x.  ROCr's image extension asks for it in
 * hsa_init (ImageManagerKv::Initialize) and asserts it succeeds.
 */
#define KS_NUM_TILE_CONFIGS 32
#define KS_NUM_MACRO_TILE_CONFIGS 16

static int ks_kfd_get_tile_config(struct file *filp, struct kfd_process *p, void *data)
{
	static const u32 zero[KS_NUM_TILE_CONFIGS];
	struct kfd_ioctl_get_tile_config_args *args = data;

	if (ks_dev_index(args->gpu_id) < 0)
		return -EINVAL;
	args->gb_addr_config = KS_GB_ADDR_CONFIG;
	args->num_banks = 0;
	args->num_ranks = 0;
	args->num_tile_configs = min_t(u32, args->num_tile_configs, KS_NUM_TILE_CONFIGS);
	if (copy_to_user(u64_to_user_ptr(args->tile_config_ptr), zero,
			 args->num_tile_configs * sizeof(u32))) {
		args->num_tile_configs = 0;
		return -EFAULT;
	}
	args->num_macro_tile_configs = min_t(u32, args->num_macro_tile_configs,
					     KS_NUM_MACRO_TILE_CONFIGS);
	if (copy_to_user(u64_to_user_ptr(args->macro_tile_config_ptr), zero,
			 args->num_macro_tile_configs * sizeof(u32))) {
		args->num_macro_tile_configs = 0;
		return -EFAULT;
	}
	return 0;
}

#define KS_IOCTL(ioc, f) \
	[_IOC_NR(AMDKFD_IOC_##ioc)] = { AMDKFD_IOC_##ioc, f }

static const struct ks_kfd_ioctl ks_kfd_ioctls[] = {
	KS_IOCTL(GET_VERSION, ks_kfd_get_version),
	KS_IOCTL(SMI_EVENTS, ks_kfd_smi_events),
	KS_IOCTL(CREATE_EVENT, ks_kfd_create_event),
	KS_IOCTL(DESTROY_EVENT, ks_kfd_destroy_event),
	KS_IOCTL(SET_EVENT, ks_kfd_set_event),
	KS_IOCTL(RESET_EVENT, ks_kfd_reset_event),
	KS_IOCTL(WAIT_EVENTS, ks_kfd_wait_events),
	KS_IOCTL(CREATE_QUEUE, ks_kfd_create_queue),
	KS_IOCTL(DESTROY_QUEUE, ks_kfd_destroy_queue),
	KS_IOCTL(UPDATE_QUEUE, ks_kfd_update_queue),
	KS_IOCTL(SET_CU_MASK, ks_kfd_set_cu_mask),
	KS_IOCTL(SET_SCRATCH_BACKING_VA, ks_kfd_set_scratch_backing_va),
	KS_IOCTL(SET_XNACK_MODE, ks_kfd_set_xnack_mode),
	KS_IOCTL(SET_TRAP_HANDLER, ks_kfd_set_trap_handler),
	KS_IOCTL(SET_MEMORY_POLICY, ks_kfd_set_memory_policy),
	KS_IOCTL(GET_CLOCK_COUNTERS, ks_kfd_get_clock_counters),
	KS_IOCTL(GET_TILE_CONFIG, ks_kfd_get_tile_config),
	KS_IOCTL(GET_PROCESS_APERTURES, ks_kfd_get_process_apertures),
	KS_IOCTL(GET_PROCESS_APERTURES_NEW, ks_kfd_get_process_apertures_new),
	KS_IOCTL(ACQUIRE_VM, ks_kfd_acquire_vm),
	KS_IOCTL(ALLOC_MEMORY_OF_GPU, ks_kfd_alloc_memory),
	KS_IOCTL(FREE_MEMORY_OF_GPU, ks_kfd_free_memory),
	KS_IOCTL(MAP_MEMORY_TO_GPU, ks_kfd_map_memory),
	KS_IOCTL(UNMAP_MEMORY_FROM_GPU, ks_kfd_unmap_memory),
	KS_IOCTL(AVAILABLE_MEMORY, ks_kfd_available_memory),
};

/* Names of the ioctls of the oldest uapi header kfdsim builds with (6.1). */
#define KS_NAME(ioc) \
	[_IOC_NR(AMDKFD_IOC_##ioc)] = #ioc

static const char * const ks_kfd_names[256] = {
	KS_NAME(GET_VERSION), KS_NAME(CREATE_QUEUE), KS_NAME(DESTROY_QUEUE),
	KS_NAME(SET_MEMORY_POLICY), KS_NAME(GET_CLOCK_COUNTERS),
	KS_NAME(GET_PROCESS_APERTURES), KS_NAME(UPDATE_QUEUE), KS_NAME(CREATE_EVENT),
	KS_NAME(DESTROY_EVENT), KS_NAME(SET_EVENT), KS_NAME(RESET_EVENT),
	KS_NAME(WAIT_EVENTS), KS_NAME(SET_SCRATCH_BACKING_VA), KS_NAME(GET_TILE_CONFIG),
	KS_NAME(SET_TRAP_HANDLER), KS_NAME(GET_PROCESS_APERTURES_NEW), KS_NAME(ACQUIRE_VM),
	KS_NAME(ALLOC_MEMORY_OF_GPU), KS_NAME(FREE_MEMORY_OF_GPU),
	KS_NAME(MAP_MEMORY_TO_GPU), KS_NAME(UNMAP_MEMORY_FROM_GPU), KS_NAME(SET_CU_MASK),
	KS_NAME(GET_QUEUE_WAVE_STATE), KS_NAME(GET_DMABUF_INFO), KS_NAME(IMPORT_DMABUF),
	KS_NAME(ALLOC_QUEUE_GWS), KS_NAME(SMI_EVENTS), KS_NAME(SVM),
	KS_NAME(SET_XNACK_MODE), KS_NAME(CRIU_OP), KS_NAME(AVAILABLE_MEMORY),
};

static long ks_kfd_ioctl(struct file *filp, unsigned int cmd, unsigned long arg)
{
	struct kfd_process *p = filp->private_data;
	unsigned int nr = _IOC_NR(cmd), usize, asize;
	const struct ks_kfd_ioctl *ioctl;
	void *kdata;
	int ret;

	atomic64_inc(&ks_kfd_calls[nr]);
	ioctl = nr < ARRAY_SIZE(ks_kfd_ioctls) ? &ks_kfd_ioctls[nr] : NULL;
	if (!ioctl || !ioctl->fn) {
		pr_warn_ratelimited("/dev/kfd: ioctl %s (nr 0x%02x) not simulated\n",
				    ks_kfd_names[nr] ?: "?", nr);
		return ioctl ? -EINVAL : -ENOTTY;
	}
	/* As KFD: only the process that opened the file may use it. */
	if (p->lead_thread != current->group_leader)
		return -EBADF;
	/* As kfd_ioctl(): an older, smaller argument struct is zero-extended. */
	usize = _IOC_SIZE(cmd);
	asize = max(usize, _IOC_SIZE(ioctl->cmd));
	cmd = ioctl->cmd;
	kdata = kzalloc(asize ?: 1, GFP_KERNEL);
	if (!kdata)
		return -ENOMEM;
	if ((cmd & IOC_IN) && copy_from_user(kdata, (void __user *)arg, usize)) {
		ret = -EFAULT;
		goto out;
	}
	ret = ioctl->fn(filp, p, kdata);
	if ((cmd & IOC_OUT) && copy_to_user((void __user *)arg, kdata, usize))
		ret = -EFAULT;
out:
	kfree(kdata);
	return ret;
}

static int ks_kfd_open(struct inode *inode, struct file *filp)
{
	struct kfd_process *p;
	int ret;

	if (iminor(inode) != 0)
		return -ENODEV;
	if (in_compat_syscall())
		return -EPERM;
	ret = ks_process_create(&p);
	if (ret)
		return ret;
	filp->private_data = p;
	return 0;
}

static int ks_kfd_release(struct inode *inode, struct file *filp)
{
	ks_process_file_release(filp->private_data);
	return 0;
}

/* The process's doorbell slice on device @dev, allocated at first use. */
static struct ks_buf *ks_doorbells(struct kfd_process *p, int dev)
{
	struct kfd_process_device *pdd;
	struct ks_buf *b;

	mutex_lock(&p->mutex);
	pdd = p->pdds[dev];
	if (!pdd->ks_doorbells)
		pdd->ks_doorbells = ks_buf_alloc(KS_DOORBELL_SLICE);
	b = pdd->ks_doorbells;
	if (b)
		ks_buf_get(b);
	mutex_unlock(&p->mutex);
	return b;
}

/*
 * kfd_mmap(): a device's remapped MMIO (HDP flush) page, here a zeroed page
 * of RAM, so mapped cached; or the process's doorbells on a device (the CP
 * polls the write pointers, so what is written there is not looked at); or
 * the event page kfdsim allocated (events.c).
 */
static int ks_kfd_mmap(struct file *filp, struct vm_area_struct *vma)
{
	u64 off = (u64)vma->vm_pgoff << PAGE_SHIFT;
	int dev = ks_dev_index((off & KS_MMAP_GPU_ID_MASK) >> KS_MMAP_GPU_ID_SHIFT);
	unsigned long size = vma->vm_end - vma->vm_start;
	struct ks_buf *b;
	int ret;

	if ((off & KS_MMAP_TYPE_MASK) == KS_MMAP_TYPE_EVENTS)
		return ks_event_mmap(filp->private_data, vma);
	if (dev < 0)
		return -EINVAL;
	switch (off & KS_MMAP_TYPE_MASK) {
	case KS_MMAP_TYPE_MMIO:
		if (size != PAGE_SIZE)
			return -EINVAL;
		vm_flags_set(vma, VM_IO | VM_DONTCOPY | VM_DONTEXPAND | VM_NORESERVE |
			     VM_DONTDUMP | VM_PFNMAP);
		return remap_pfn_range(vma, vma->vm_start, page_to_pfn(ks_mmio_page[dev]),
				       PAGE_SIZE, vma->vm_page_prot);
	case KS_MMAP_TYPE_DOORBELL:
		if (size != KS_DOORBELL_SLICE || !(vma->vm_flags & VM_SHARED))
			return -EINVAL;
		b = ks_doorbells(filp->private_data, dev);
		if (!b)
			return -ENOMEM;
		ret = ks_buf_mmap(b, vma);
		ks_buf_put(b);
		return ret;
	default:
		return -EINVAL;
	}
}

static const struct file_operations ks_kfd_fops = {
	.owner = THIS_MODULE,
	.open = ks_kfd_open,
	.release = ks_kfd_release,
	.unlocked_ioctl = ks_kfd_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.mmap = ks_kfd_mmap,
};

/**
 * ks_render_mmap() - the DRM nodes' mmap (drm.c): libhsakmt maps VRAM and
 * GTT buffers through the render node it gave ACQUIRE_VM, at their
 * mmap_offset
 * @filp: a kfdsim DRM file
 * @vma: the mapping
 *
 * Return: 0 or a negative errno.
 */
int ks_render_mmap(struct file *filp, struct vm_area_struct *vma)
{
	struct ks_buf *b;
	int ret;

	xa_lock(&ks_bo_offsets);
	b = xa_load(&ks_bo_offsets, vma->vm_pgoff);
	if (b)
		ks_buf_get(b);
	xa_unlock(&ks_bo_offsets);
	if (!b)
		return -EINVAL;
	ret = ks_buf_mmap(b, vma);
	ks_buf_put(b);
	return ret;
}

/**
 * ks_kfd_process_init() - a new process's /dev/kfd state
 * @p: process
 */
void ks_kfd_process_init(struct kfd_process *p)
{
	xa_init_flags(&p->ks_bos, XA_FLAGS_ALLOC1);
	spin_lock_init(&p->ks_vm_lock);
	INIT_LIST_HEAD(&p->ks_vm);
	ks_events_init(p);
	ks_kname_process_init(p);
}

/**
 * ks_kfd_process_free() - free what the process left of its buffer objects
 * @p: process, no longer used by anyone
 */
void ks_kfd_process_free(struct kfd_process *p)
{
	struct ks_bo *bo;
	unsigned long i;

	ks_events_free(p);
	ks_kname_process_free(p);
	xa_for_each(&p->ks_bos, i, bo)
		ks_bo_free(p, bo);
	xa_destroy(&p->ks_bos);
	for (i = 0; i < p->n_pdds; i++)
		if (p->pdds[i]->ks_doorbells)
			ks_buf_put(p->pdds[i]->ks_doorbells);
}

static int ks_kfd_calls_show(struct seq_file *m, void *unused)
{
	unsigned int nr;
	u64 n;

	for (nr = 0; nr < ARRAY_SIZE(ks_kfd_calls); nr++) {
		n = atomic64_read(&ks_kfd_calls[nr]);
		if (!n)
			continue;
		if (ks_kfd_names[nr])
			seq_printf(m, "%s %llu\n", ks_kfd_names[nr], n);
		else
			seq_printf(m, "0x%02x %llu\n", nr, n);
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(ks_kfd_calls);

static int ks_kfd_state_show(struct seq_file *m, void *unused)
{
	static const char * const state[] = { "off", "on", "refused" };

	seq_printf(m, "%s\nversion %d.%d\n", state[ks_kfd_state], KFD_IOCTL_MAJOR_VERSION,
		   KFD_IOCTL_MINOR_VERSION);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(ks_kfd_state);

static bool ks_path_exists(const char *name)
{
	struct path path;

	if (kern_path(name, 0, &path))
		return false;
	path_put(&path);
	return true;
}

/*
 * Someone else's KFD, or amdgpu, is there: say so, register nothing.  DRM
 * chooses render minors, so a render node is no conflict; the amdgpu module
 * (its DRM devices, the KFD it may bring up later) is.
 */
static const char *ks_kfd_conflict(void)
{
	if (ks_path_exists("/dev/kfd"))
		return "/dev/kfd";
	if (ks_path_exists("/sys/module/amdgpu"))
		return "/sys/module/amdgpu";
	return NULL;
}

static void ks_renders_exit(void)
{
	unsigned int i;

	ks_drm_exit();
	for (i = 0; i < ks_param.ndev; i++) {
		if (ks_mmio_page[i])
			__free_page(ks_mmio_page[i]);
		ks_mmio_page[i] = NULL;
	}
}

static int ks_renders_init(struct dentry *debugfs)
{
	unsigned int i;

	for (i = 0; i < ks_param.ndev; i++) {
		ks_mmio_page[i] = alloc_page(GFP_KERNEL | __GFP_ZERO);
		if (!ks_mmio_page[i])
			return -ENOMEM;
	}
	return ks_drm_init(debugfs);
}

/**
 * ks_kfd_init() - register /dev/kfd, the kfd class, its topology and the
 * render nodes, unless kfd=0 or another KFD is there
 * @debugfs: kfdsim's debugfs directory, for kfd and kfd_ioctls
 *
 * Return: 0 (also when refused) or a negative errno.
 */
int ks_kfd_init(struct dentry *debugfs)
{
	const char *conflict;
	int ret;

	debugfs_create_file("kfd", 0444, debugfs, NULL, &ks_kfd_state_fops);
	debugfs_create_file("kfd_ioctls", 0444, debugfs, NULL, &ks_kfd_calls_fops);
	if (!ks_param.kfd)
		return 0;
	conflict = ks_kfd_conflict();
	if (conflict) {
		pr_warn("%s exists (amdgpu loaded?): kfdsim registers no /dev/kfd, topology or render node\n",
			conflict);
		ks_kfd_state = KS_KFD_REFUSED;
		return 0;
	}
	ret = class_register(&ks_kfd_class);
	if (ret == -EEXIST) {
		pr_warn("the kfd class exists (amdgpu loaded?): kfdsim registers no /dev/kfd, topology or render node\n");
		ks_kfd_state = KS_KFD_REFUSED;
		return 0;
	}
	if (ret)
		return ret;
	ks_kfd_major = register_chrdev(0, "kfd", &ks_kfd_fops);
	if (ks_kfd_major < 0) {
		ret = ks_kfd_major;
		goto err_class;
	}
	ks_kfd_device = device_create(&ks_kfd_class, NULL, MKDEV(ks_kfd_major, 0), NULL, "kfd");
	if (IS_ERR(ks_kfd_device)) {
		ret = PTR_ERR(ks_kfd_device);
		goto err_chrdev;
	}
	ret = ks_renders_init(debugfs);
	if (ret)
		goto err_renders;
	ret = ks_topology_init(&ks_kfd_device->kobj);
	if (ret)
		goto err_renders;
	ks_kfd_state = KS_KFD_ON;
	pr_info("/dev/kfd: KFD %d.%d, %u gfx908 node(s), render minor %u..%u\n",
		KFD_IOCTL_MAJOR_VERSION, KFD_IOCTL_MINOR_VERSION, ks_param.ndev,
		ks_drm_render_minor(0), ks_drm_render_minor(ks_param.ndev - 1));
	return 0;

err_renders:
	ks_renders_exit();
	device_destroy(&ks_kfd_class, MKDEV(ks_kfd_major, 0));
err_chrdev:
	unregister_chrdev(ks_kfd_major, "kfd");
err_class:
	class_unregister(&ks_kfd_class);
	return ret;
}

/**
 * ks_kfd_exit() - unregister what ks_kfd_init() registered
 */
void ks_kfd_exit(void)
{
	if (ks_kfd_state != KS_KFD_ON)
		return;
	ks_topology_exit();
	ks_renders_exit();
	device_destroy(&ks_kfd_class, MKDEV(ks_kfd_major, 0));
	unregister_chrdev(ks_kfd_major, "kfd");
	class_unregister(&ks_kfd_class);
	ks_kfd_state = KS_KFD_OFF;
}
