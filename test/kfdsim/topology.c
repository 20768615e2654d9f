// SPDX-License-Identifier: GPL-2.0
/*
 * topology.c - the KFD topology in sysfs, after amdkfd's kfd_topology.c:
 * /sys/devices/virtual/kfd/kfd/topology/{generation_id,system_properties}
 * and nodes/N/{gpu_id,name,properties,mem_banks,caches,io_links,p2p_links,
 * perf}, in the "name value" format libhsakmt parses.  Node 0 is the CPU,
 * node 1 + i is kfdsim device i: a gfx908 (MI100, Arcturus) Instinct-class
 * dGPU with kfdsim's num_cu CUs, linked to the CPU by PCIe.  The tree is
 * static: it is built once at load and never changes (generation_id 1).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpumask.h>
#include <linux/kobject.h>
#include <linux/mm.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/sysfs.h>
#include <uapi/linux/kfd_sysfs.h>
#include "kfdsim.h"

/* The simulated GPU's identity (amdgpu: CHIP_ARCTURUS, gfx 9.0.8) */
#define KS_GFX_TARGET_VERSION 90008
#define KS_VENDOR_ID 0x1002
#define KS_SIMD_PER_CU 4

/* HSA heap, cache and io-link types (kfd_crat.h) */
#define KS_HEAP_SYSTEM 0
#define KS_HEAP_FB_PUBLIC 1
#define KS_CACHE_DATA 0x1
#define KS_CACHE_CPU 0x4
#define KS_CACHE_HSACU 0x8
#define KS_IOLINK_PCIE 2

/* A directory; all of them, and their files, in creation order. */
struct ks_tdir {
	struct kobject kobj;
	struct list_head node;
};

struct ks_tfile {
	struct attribute attr;
	char *text;
	struct list_head node;
};

static LIST_HEAD(ks_tdirs);
static LIST_HEAD(ks_tfiles);

/* The text is shorter than a page (ks_prop), with its newlines. */
static ssize_t ks_tfile_show(struct kobject *kobj, struct attribute *attr, char *buf)
{
	const char *text = container_of(attr, struct ks_tfile, attr)->text;
	size_t len = strlen(text);

	memcpy(buf, text, len);
	return len;
}

static void ks_tdir_release(struct kobject *kobj)
{
	kfree(container_of(kobj, struct ks_tdir, kobj));
}

static const struct sysfs_ops ks_tsysfs_ops = {
	.show = ks_tfile_show,
};

static const struct kobj_type ks_ttype = {
	.release = ks_tdir_release,
	.sysfs_ops = &ks_tsysfs_ops,
};

static struct kobject *ks_tdir(struct kobject *parent, const char *name)
{
	struct ks_tdir *d;

	if (!parent)
		return NULL;
	d = kzalloc(sizeof(*d), GFP_KERNEL);
	if (!d)
		return NULL;
	if (kobject_init_and_add(&d->kobj, &ks_ttype, parent, "%s", name)) {
		kobject_put(&d->kobj);
		return NULL;
	}
	list_add_tail(&d->node, &ks_tdirs);
	return &d->kobj;
}

/* A directory named by a number, as nodes/N and mem_banks/N. */
static struct kobject *ks_tdir_n(struct kobject *parent, unsigned int n)
{
	char name[12];

	snprintf(name, sizeof(name), "%u", n);
	return ks_tdir(parent, name);
}

/* A read-only file @name in @dir, whose content @text the file now owns. */
static int ks_tfile(struct kobject *dir, const char *name, char *text)
{
	struct ks_tfile *f;
	int ret;

	if (!dir || !text) {
		kfree(text);
		return -ENOMEM;
	}
	f = kzalloc(sizeof(*f), GFP_KERNEL);
	if (!f) {
		kfree(text);
		return -ENOMEM;
	}
	f->text = text;
	f->attr.name = name;
	f->attr.mode = 0444;
	sysfs_attr_init(&f->attr);
	list_add_tail(&f->node, &ks_tfiles);
	ret = sysfs_create_file(dir, &f->attr);
	return ret;
}

/* Builds a properties file's text: "name value" lines. */
struct ks_props {
	char *buf;
	size_t len;
};

static void ks_prop(struct ks_props *p, const char *name, u64 val)
{
	if (p->buf && p->len < PAGE_SIZE)
		p->len += scnprintf(p->buf + p->len, PAGE_SIZE - p->len, "%s %llu\n", name, val);
}

static int ks_props_file(struct kobject *dir, struct ks_props *p)
{
	return ks_tfile(dir, "properties", p->buf);
}

static int ks_props_start(struct ks_props *p)
{
	p->buf = kzalloc(PAGE_SIZE, GFP_KERNEL);
	p->len = 0;
	return p->buf ? 0 : -ENOMEM;
}

/* nodes/N/{mem_banks,caches,io_links,p2p_links,perf}/ */
struct ks_node_dirs {
	struct kobject *node, *mem, *caches, *io_links;
};

static int ks_node_dirs(struct kobject *nodes, unsigned int n, struct ks_node_dirs *d)
{
	d->node = ks_tdir_n(nodes, n);
	if (!d->node)
		return -ENOMEM;
	d->mem = ks_tdir(d->node, "mem_banks");
	d->caches = ks_tdir(d->node, "caches");
	d->io_links = ks_tdir(d->node, "io_links");
	if (!d->mem || !d->caches || !d->io_links ||
	    !ks_tdir(d->node, "p2p_links") || !ks_tdir(d->node, "perf"))
		return -ENOMEM;
	return 0;
}

static int ks_mem_bank(struct kobject *mem, unsigned int n, u32 heap, u64 size, u32 width,
		       u32 clk)
{
	struct ks_props p;

	if (ks_props_start(&p))
		return -ENOMEM;
	ks_prop(&p, "heap_type", heap);
	ks_prop(&p, "size_in_bytes", size);
	ks_prop(&p, "flags", 0);
	ks_prop(&p, "width", width);
	ks_prop(&p, "mem_clk_max", clk);
	return ks_props_file(ks_tdir_n(mem, n), &p);
}

static int ks_cache(struct kobject *caches, unsigned int n, u32 proc_lo, u32 level,
		    u32 size_kb, u32 type)
{
	struct ks_props p;

	if (ks_props_start(&p))
		return -ENOMEM;
	ks_prop(&p, "processor_id_low", proc_lo);
	ks_prop(&p, "level", level);
	ks_prop(&p, "size", size_kb);
	ks_prop(&p, "cache_line_size", 64);
	ks_prop(&p, "cache_lines_per_tag", 1);
	ks_prop(&p, "association", 16);
	ks_prop(&p, "latency", 1);
	ks_prop(&p, "type", type);
	ks_prop(&p, "sibling_map", 1);
	return ks_props_file(ks_tdir_n(caches, n), &p);
}

static int ks_io_link(struct kobject *io_links, unsigned int n, u32 from, u32 to)
{
	struct ks_props p;

	if (ks_props_start(&p))
		return -ENOMEM;
	ks_prop(&p, "type", KS_IOLINK_PCIE);
	ks_prop(&p, "version_major", 0);
	ks_prop(&p, "version_minor", 0);
	ks_prop(&p, "node_from", from);
	ks_prop(&p, "node_to", to);
	ks_prop(&p, "weight", 20);
	ks_prop(&p, "min_latency", 0);
	ks_prop(&p, "max_latency", 0);
	ks_prop(&p, "min_bandwidth", 0);
	ks_prop(&p, "max_bandwidth", 0);
	ks_prop(&p, "recommended_transfer_size", 0);
	ks_prop(&p, "recommended_sdma_engine_id_mask", 0);
	ks_prop(&p, "flags", 1);
	return ks_props_file(ks_tdir_n(io_links, n), &p);
}

/* The node properties every node shows, in kfd_topology.c's node_show() order. */
struct ks_node_info {
	u32 cpu_cores, simd, mem_banks, caches, io_links, simd_id_base;
	u32 waves, lds_kb, gws, wave_size, arrays, cu_per_array, simd_per_cu, scratch_slots;
	u32 gfx_target, vendor, device, location, render_minor, sdma, sdma_queues, cp_queues;
};

static void ks_node_props(struct ks_props *p, const struct ks_node_info *n)
{
	ks_prop(p, "cpu_cores_count", n->cpu_cores);
	ks_prop(p, "simd_count", n->simd);
	ks_prop(p, "mem_banks_count", n->mem_banks);
	ks_prop(p, "caches_count", n->caches);
	ks_prop(p, "io_links_count", n->io_links);
	ks_prop(p, "p2p_links_count", 0);
	ks_prop(p, "cpu_core_id_base", 0);
	ks_prop(p, "simd_id_base", n->simd_id_base);
	ks_prop(p, "max_waves_per_simd", n->waves);
	ks_prop(p, "lds_size_in_kb", n->lds_kb);
	ks_prop(p, "gds_size_in_kb", 0);
	ks_prop(p, "num_gws", n->gws);
	ks_prop(p, "wave_front_size", n->wave_size);
	ks_prop(p, "array_count", n->arrays);
	ks_prop(p, "simd_arrays_per_engine", n->arrays ? 1 : 0);
	ks_prop(p, "cu_per_simd_array", n->cu_per_array);
	ks_prop(p, "simd_per_cu", n->simd_per_cu);
	ks_prop(p, "max_slots_scratch_cu", n->scratch_slots);
	ks_prop(p, "gfx_target_version", n->gfx_target);
	ks_prop(p, "vendor_id", n->vendor);
	ks_prop(p, "device_id", n->device);
	ks_prop(p, "location_id", n->location);
	ks_prop(p, "domain", 0);
	ks_prop(p, "drm_render_minor", n->render_minor);
	ks_prop(p, "hive_id", 0);
	ks_prop(p, "num_sdma_engines", n->sdma);
	ks_prop(p, "num_sdma_xgmi_engines", 0);
	ks_prop(p, "num_sdma_queues_per_engine", n->sdma_queues);
	ks_prop(p, "num_cp_queues", n->cp_queues);
}

static int ks_cpu_node(struct kobject *nodes)
{
	struct ks_node_info n = {
		.cpu_cores = num_online_cpus(),
		.mem_banks = 1,
		.caches = 1,
		.io_links = ks_param.ndev,
	};
	struct ks_node_dirs d;
	struct ks_props p;
	unsigned int i;
	int ret = ks_node_dirs(nodes, 0, &d);

	ret = ret ?: ks_tfile(d.node, "gpu_id", kasprintf(GFP_KERNEL, "0\n"));
	ret = ret ?: ks_tfile(d.node, "name", kasprintf(GFP_KERNEL, "\n"));
	ret = ret ?: ks_props_start(&p);
	if (ret)
		return ret;
	ks_node_props(&p, &n);
	ks_prop(&p, "max_engine_clk_ccompute", 0);
	ret = ks_props_file(d.node, &p);
	ret = ret ?: ks_mem_bank(d.mem, 0, KS_HEAP_SYSTEM, (u64)totalram_pages() << PAGE_SHIFT,
				 64, 0);
	ret = ret ?: ks_cache(d.caches, 0, 0, 1, 32, KS_CACHE_DATA | KS_CACHE_CPU);
	for (i = 0; !ret && i < ks_param.ndev; i++)
		ret = ks_io_link(d.io_links, i, 0, i + 1);
	return ret;
}

static int ks_gpu_node(struct kobject *nodes, unsigned int id)
{
	struct ks_node_info n = {
		.simd = ks_param.num_cu * KS_SIMD_PER_CU,
		.mem_banks = 1,
		.caches = 2,
		.io_links = 1,
		.simd_id_base = 0x80001000 + id * 0x1000,
		.waves = 10,
		.lds_kb = 64,
		.gws = 64,
		.wave_size = 64,
		.arrays = ks_param.num_se,	/* one shader array per engine */
		.cu_per_array = ks_param.num_cu / ks_param.num_se,
		.simd_per_cu = KS_SIMD_PER_CU,
		.scratch_slots = 32,
		.gfx_target = KS_GFX_TARGET_VERSION,
		.vendor = KS_VENDOR_ID,
		.device = KS_DEVICE_ID,
		.location = (0x10 + id) << 8,	/* PCI bus 0x10 + id, devfn 0 */
		.render_minor = ks_drm_render_minor(id),	/* DRM chose it */
		.sdma = 2,
		.sdma_queues = 8,
		.cp_queues = ks_param.hqds,	/* get_cp_queues_num() */
	};
	struct ks_node_dirs d;
	struct ks_props p;
	int ret = ks_node_dirs(nodes, id + 1, &d);

	ret = ret ?: ks_tfile(d.node, "gpu_id", kasprintf(GFP_KERNEL, "%u\n", KS_GPU_ID(id)));
	ret = ret ?: ks_tfile(d.node, "name", kasprintf(GFP_KERNEL, "arcturus\n"));
	ret = ret ?: ks_props_start(&p);
	if (ret)
		return ret;
	ks_node_props(&p, &n);
	ks_prop(&p, "max_engine_clk_fcompute", 1502);
	ks_prop(&p, "local_mem_size", 0);
	ks_prop(&p, "fw_version", 60);
	ks_prop(&p, "capability",
		HSA_CAP_DOORBELL_TYPE_2_0 << HSA_CAP_DOORBELL_TYPE_TOTALBITS_SHIFT);
	ks_prop(&p, "debug_prop", 0);
	ks_prop(&p, "sdma_fw_version", 0);
	ks_prop(&p, "unique_id", 0x4b53494d00000000ULL + id);	/* "KSIM" */
	ks_prop(&p, "num_xcc", 1);
	ks_prop(&p, "max_engine_clk_ccompute", 0);
	ret = ks_props_file(d.node, &p);
	ret = ret ?: ks_mem_bank(d.mem, 0, KS_HEAP_FB_PUBLIC, KS_VRAM_SIZE, 4096, 1200);
	ret = ret ?: ks_cache(d.caches, 0, n.simd_id_base, 1, 16, KS_CACHE_DATA | KS_CACHE_HSACU);
	ret = ret ?: ks_cache(d.caches, 1, n.simd_id_base, 2, 8192, KS_CACHE_DATA | KS_CACHE_HSACU);
	ret = ret ?: ks_io_link(d.io_links, 0, id + 1, 0);
	return ret;
}

/**
 * ks_topology_init() - build the topology tree under the kfd device
 * @kfd_kobj: /sys/devices/virtual/kfd/kfd
 *
 * Return: 0 or a negative errno (the tree is then removed).
 */
int ks_topology_init(struct kobject *kfd_kobj)
{
	struct kobject *topo, *nodes;
	struct ks_props p;
	unsigned int i;
	int ret;

	topo = ks_tdir(kfd_kobj, "topology");
	ret = ks_tfile(topo, "generation_id", kasprintf(GFP_KERNEL, "1\n"));
	ret = ret ?: ks_props_start(&p);
	if (!ret) {
		ks_prop(&p, "platform_oem", 0);
		ks_prop(&p, "platform_id", 0);
		ks_prop(&p, "platform_rev", 0);
		ret = ks_tfile(topo, "system_properties", p.buf);
	}
	nodes = ret ? NULL : ks_tdir(topo, "nodes");
	ret = ret ?: ks_cpu_node(nodes);
	for (i = 0; !ret && i < ks_param.ndev; i++)
		ret = ks_gpu_node(nodes, i);
	if (ret)
		ks_topology_exit();
	return ret;
}

/**
 * ks_topology_exit() - remove the topology tree
 */
void ks_topology_exit(void)
{
	struct ks_tfile *f, *fn;
	struct ks_tdir *d;

	/* Children before parents: each put removes a directory. */
	while (!list_empty(&ks_tdirs)) {
		d = list_last_entry(&ks_tdirs, struct ks_tdir, node);
		list_del(&d->node);
		kobject_put(&d->kobj);
	}
	list_for_each_entry_safe(f, fn, &ks_tfiles, node) {
		list_del(&f->node);
		kfree(f->text);
		kfree(f);
	}
}
