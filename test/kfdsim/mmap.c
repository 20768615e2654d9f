// SPDX-License-Identifier: GPL-2.0
/*
 * mmap.c - the user memory the simulated hardware reads.
 *
 * A queue's ring, read/write pointers and signal area are ordinary user
 * memory, pinned and vmapped at creation (KFD's kfd_queue_acquire_buffers()
 * takes BO references instead) and released at destroy/teardown.
 *
 * Or driver buffers: mmap() of /dev/kfdsim gives zeroed memory mapped
 * VM_IO | VM_PFNMAP, like a TTM-mmapped GTT BO, so pin_user_pages() fails on
 * it and only page-table walks (__get_user) or access_process_vm() (through
 * vm_ops->access) can read it from another context.  Queue memory inside
 * such a buffer is used through the buffer's kernel mapping (DESIGN.md
 * section 3: the non-pinnable path).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include "kfdsim.h"

struct ks_buf {
	struct kref ref;
	void *kaddr;
	size_t size;
};

static void ks_buf_release(struct kref *ref)
{
	struct ks_buf *b = container_of(ref, struct ks_buf, ref);

	vfree(b->kaddr);
	kfree(b);
}

/**
 * ks_buf_put() - drop a buffer reference
 * @b: buffer
 */
void ks_buf_put(struct ks_buf *b)
{
	kref_put(&b->ref, ks_buf_release);
}

/**
 * ks_buf_kaddr() - a driver buffer's kernel address
 * @b: buffer
 *
 * Return: the address of its first byte.
 */
void *ks_buf_kaddr(struct ks_buf *b)
{
	return b->kaddr;
}

/**
 * ks_buf_get() - take a buffer reference
 * @b: buffer
 */
void ks_buf_get(struct ks_buf *b)
{
	kref_get(&b->ref);
}

static void ks_vm_open(struct vm_area_struct *vma)
{
	struct ks_buf *b = vma->vm_private_data;

	kref_get(&b->ref);
}

static void ks_vm_close(struct vm_area_struct *vma)
{
	ks_buf_put(vma->vm_private_data);
}

static unsigned long ks_vma_off(struct vm_area_struct *vma, unsigned long addr)
{
	return (vma->vm_pgoff << PAGE_SHIFT) + (addr - vma->vm_start);
}

/* access_process_vm() on VM_IO | VM_PFNMAP memory lands here. */
static int ks_vm_access(struct vm_area_struct *vma, unsigned long addr, void *buf, int len,
			int write)
{
	struct ks_buf *b = vma->vm_private_data;
	unsigned long off = ks_vma_off(vma, addr);

	if (len <= 0 || off >= b->size)
		return -EINVAL;
	len = min_t(unsigned long, len, b->size - off);
	if (write)
		memcpy(b->kaddr + off, buf, len);
	else
		memcpy(buf, b->kaddr + off, len);
	return len;
}

static const struct vm_operations_struct ks_vm_ops = {
	.open = ks_vm_open,
	.close = ks_vm_close,
	.access = ks_vm_access,
};

/**
 * ks_buf_alloc() - a zeroed driver buffer
 * @size: bytes, page-aligned
 *
 * Return: the buffer with one reference, or NULL.
 */
struct ks_buf *ks_buf_alloc(size_t size)
{
	struct ks_buf *b = kzalloc(sizeof(*b), GFP_KERNEL);

	if (!b)
		return NULL;
	kref_init(&b->ref);
	b->size = size;
	b->kaddr = vmalloc_user(size);
	if (!b->kaddr) {
		kfree(b);
		return NULL;
	}
	return b;
}

/**
 * ks_buf_mmap() - map a driver buffer VM_PFNMAP from its start
 * @b: buffer; the mapping takes a reference of its own
 * @vma: the new mapping, at most @b's size
 *
 * A private mapping (the PROT_NONE one libhsakmt makes of VRAM the CPU has
 * no access to) gets no page: the buffer is reachable only by the GPU.
 *
 * Return: 0 or a negative errno.
 */
int ks_buf_mmap(struct ks_buf *b, struct vm_area_struct *vma)
{
	unsigned long size = vma->vm_end - vma->vm_start, off;
	int ret;

	if (size > b->size)
		return -EINVAL;
	vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP | VM_DONTCOPY);
	vma->vm_pgoff = 0;	/* ks_vma_off(): offsets within the buffer */
	for (off = 0; (vma->vm_flags & VM_SHARED) && off < size; off += PAGE_SIZE) {
		ret = remap_pfn_range(vma, vma->vm_start + off, vmalloc_to_pfn(b->kaddr + off),
				      PAGE_SIZE, vma->vm_page_prot);
		if (ret)
			return ret;
	}
	kref_get(&b->ref);
	vma->vm_private_data = b;
	vma->vm_ops = &ks_vm_ops;
	return 0;
}

/**
 * ks_mmap() - /dev/kfdsim mmap: a new driver buffer, mapped VM_PFNMAP
 * @filp: file
 * @vma: the new mapping (offset 0, at most KFDSIM_MAX_MMAP_SIZE bytes)
 *
 * Return: 0 or a negative errno.
 */
int ks_mmap(struct file *filp, struct vm_area_struct *vma)
{
	unsigned long size = vma->vm_end - vma->vm_start;
	struct ks_buf *b;
	int ret;

	if (vma->vm_pgoff || size > KFDSIM_MAX_MMAP_SIZE) {
		pr_err_ratelimited("mmap: offset must be 0 and size at most %u\n",
				   KFDSIM_MAX_MMAP_SIZE);
		return -EINVAL;
	}
	b = ks_buf_alloc(size);
	if (!b)
		return -ENOMEM;
	ret = ks_buf_mmap(b, vma);
	ks_buf_put(b);
	return ret;
}

/**
 * ks_buf_lookup() - the kernel address of user memory in a driver buffer
 * @uva: user address in the current process
 * @len: bytes from @uva
 * @out: the buffer, with a reference for the caller
 *
 * Return: the kernel address, or NULL if [uva, uva + len) is not all in one
 * kfdsim mapping.
 */
void *ks_buf_lookup(u64 uva, u32 len, struct ks_buf **out)
{
	struct mm_struct *mm = current->mm;
	struct vm_area_struct *vma;
	void *kaddr = NULL;

	mmap_read_lock(mm);
	vma = vma_lookup(mm, uva);
	if (vma && vma->vm_ops == &ks_vm_ops && uva + len <= vma->vm_end) {
		struct ks_buf *b = vma->vm_private_data;
		unsigned long off = ks_vma_off(vma, uva);

		if (off + len <= b->size) {
			kref_get(&b->ref);
			*out = b;
			kaddr = b->kaddr + off;
		}
	}
	mmap_read_unlock(mm);
	return kaddr;
}

/* Pin [uva, uva + len) and map it contiguously. */
static void *ks_pin_map(struct ks_queue *ks, u64 uva, u32 len)
{
	unsigned long first = uva & PAGE_MASK;
	int n = (PAGE_ALIGN(uva + len) - first) >> PAGE_SHIFT;
	struct page **pages = ks->pages + ks->npages;
	long got;
	void *map;

	if (WARN_ON_ONCE(ks->nvmaps >= KS_MAX_UMAPS))
		return NULL;
	got = pin_user_pages_fast(first, n, FOLL_WRITE | FOLL_LONGTERM, pages);
	if (got != n) {
		if (got > 0)
			unpin_user_pages(pages, got);
		return NULL;
	}
	map = vmap(pages, n, VM_MAP, PAGE_KERNEL);
	if (!map) {
		unpin_user_pages(pages, n);
		return NULL;
	}
	ks->npages += n;
	ks->vmaps[ks->nvmaps++] = map;
	return map + offset_in_page(uva);
}

/* A driver buffer's kernel address, else pinned pages. */
static void *ks_map_user(struct ks_queue *ks, u64 uva, u32 len)
{
	struct ks_buf *b;
	void *kaddr;

	if (WARN_ON_ONCE(ks->nbufs >= KS_MAX_UMAPS))
		return NULL;
	kaddr = ks_buf_lookup(uva, len, &b);
	if (kaddr) {
		ks->bufs[ks->nbufs++] = b;
		return kaddr;
	}
	return ks_pin_map(ks, uva, len);
}

static int ks_npages(u64 uva, u32 len)
{
	return (PAGE_ALIGN(uva + len) - (uva & PAGE_MASK)) >> PAGE_SHIFT;
}

/**
 * ks_queue_pin() - pin (or find in driver buffers) and map a new queue's memory
 * @q: queue
 * @ring: ring address
 * @ring_size: bytes
 * @rptr: read index address (8-byte aligned)
 * @wptr: write index address (8-byte aligned)
 * @sig: signal area address
 * @sig_size: bytes, may be 0
 *
 * Return: 0 or -EFAULT/-ENOMEM; on error nothing is left pinned.
 */
int ks_queue_pin(struct queue *q, u64 ring, u32 ring_size, u64 rptr, u64 wptr, u64 sig,
		 u32 sig_size)
{
	struct ks_queue *ks = &q->ks;
	int max = ks_npages(ring, ring_size) + 2 + (sig_size ? ks_npages(sig, sig_size) : 0);

	ks->pages = kcalloc(max, sizeof(*ks->pages), GFP_KERNEL);
	ks->saved = kcalloc(ks_param.num_cu, sizeof(*ks->saved), GFP_KERNEL);
	if (!ks->pages || !ks->saved) {
		ks_queue_unpin(q);
		return -ENOMEM;
	}
	ks->ring_map = ks_map_user(ks, ring, ring_size);
	ks->rptr = ks_map_user(ks, rptr, 8);
	ks->wptr = ks_map_user(ks, wptr, 8);
	if (sig_size)
		ks->sig_map = ks_map_user(ks, sig, sig_size);
	if (!ks->ring_map || !ks->rptr || !ks->wptr || (sig_size && !ks->sig_map)) {
		ks_queue_unpin(q);
		return -EFAULT;
	}
	ks->ring_uva = ring;
	ks->ring_slots = ring_size / sizeof(struct kfdsim_packet);
	ks->ring_bytes = ring_size;
	ks->sig_uva = sig;
	ks->sig_size = sig_size;
	return 0;
}

/**
 * ks_queue_unpin() - undo ks_queue_pin()
 * @q: queue, off the simulated hardware
 */
void ks_queue_unpin(struct queue *q)
{
	struct ks_queue *ks = &q->ks;
	int i;

	for (i = 0; i < ks->nvmaps; i++)
		vunmap(ks->vmaps[i]);
	if (ks->npages)
		unpin_user_pages(ks->pages, ks->npages);
	for (i = 0; i < ks->nbufs; i++)
		ks_buf_put(ks->bufs[i]);
	kfree(ks->pages);
	kfree(ks->saved);
	memset(ks, 0, sizeof(*ks));
}
