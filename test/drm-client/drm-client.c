// SPDX-License-Identifier: GPL-2.0
/*
 * drm-client - the host's libdrm_amdgpu on DRM render nodes, what ROCr 6.1
 * and later do per GPU agent, printed one "key value" line each for
 * test/vm/sim-drm.sh:
 *
 *   drm-client NODE...
 *
 * For each NODE (index i): open it, amdgpu_device_initialize(),
 * amdgpu_query_gpu_info(), amdgpu_get_marketing_name(), and
 *
 *   dev<i>.minor <m>              the node's minor (fstat)
 *   dev<i>.init <r>               amdgpu_device_initialize() = r
 *   dev<i>.drm_version <M>.<m>    the DRM version it saw
 *   dev<i>.asic_id 0x<id>         amdgpu_query_gpu_info(): the PCI device id
 *   dev<i>.family_id <f>
 *   dev<i>.chip_external_rev <r>
 *   dev<i>.num_shader_engines <n>
 *   dev<i>.cu_active_number <n>
 *   dev<i>.gpu_counter_freq <khz>
 *   dev<i>.gb_addr_cfg 0x<v>
 *   dev<i>.marketing_name <name>
 *   dev<i>.bad.<what> <errno>     a DRM_AMDGPU_INFO the kernel must refuse:
 *                                 unknown query, return_size 0, an unknown
 *                                 register, an unmapped return_pointer
 *
 * then "handles_distinct yes|no" (every node initialised, each to its own
 * handle: libdrm tells devices apart by their primary nodes) and, after amdgpu_device_deinitialize() of each,
 * "deinit 0".  Exit status 0 when every libdrm call succeeded.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <amdgpu.h>
#include <amdgpu_drm.h>
#include <xf86drm.h>

#define MAX_NODES 8

/* One raw DRM_AMDGPU_INFO: 0 or the errno the kernel gave. */
static int info(int fd, uint32_t query, void *out, uint32_t size, uint32_t reg)
{
	struct drm_amdgpu_info req;

	memset(&req, 0, sizeof(req));
	req.return_pointer = (uintptr_t)out;
	req.return_size = size;
	req.query = query;
	req.read_mmr_reg.dword_offset = reg;
	req.read_mmr_reg.count = 1;
	req.read_mmr_reg.instance = 0xffffffff;
	return -drmCommandWrite(fd, DRM_AMDGPU_INFO, &req, sizeof(req));
}

static void bad_queries(int i, int fd)
{
	uint32_t v[64];
	void *unmapped;

	printf("dev%d.bad.query %d\n", i, info(fd, 0x7f, v, sizeof(v), 0));
	printf("dev%d.bad.size0 %d\n", i, info(fd, AMDGPU_INFO_DEV_INFO, v, 0, 0));
	printf("dev%d.bad.register %d\n", i, info(fd, AMDGPU_INFO_READ_MMR_REG, v, 4, 0x2644));
	unmapped = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (unmapped == MAP_FAILED)
		return;
	munmap(unmapped, 4096);
	printf("dev%d.bad.pointer %d\n", i, info(fd, AMDGPU_INFO_DEV_INFO, unmapped, sizeof(v), 0));
}

int main(int argc, char **argv)
{
	amdgpu_device_handle dev[MAX_NODES] = { 0 };
	struct amdgpu_gpu_info gi;
	int i, j, n = argc - 1, fd, rc = 0, distinct = 1;
	uint32_t vmaj, vmin;
	struct stat st;
	const char *name;

	if (n < 1 || n > MAX_NODES) {
		fprintf(stderr, "usage: drm-client NODE... (at most %d)\n", MAX_NODES);
		return 2;
	}
	for (i = 0; i < n; i++) {
		fd = open(argv[i + 1], O_RDWR | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &st)) {
			printf("dev%d.open %d\n", i, errno);
			rc = 1;
			continue;
		}
		printf("dev%d.minor %u\n", i, minor(st.st_rdev));
		j = amdgpu_device_initialize(fd, &vmaj, &vmin, &dev[i]);
		printf("dev%d.init %d\n", i, j);
		if (j) {
			dev[i] = NULL;
			rc = 1;
			close(fd);
			continue;
		}
		printf("dev%d.drm_version %u.%u\n", i, vmaj, vmin);
		if (amdgpu_query_gpu_info(dev[i], &gi)) {
			rc = 1;
		} else {
			printf("dev%d.asic_id 0x%x\n", i, gi.asic_id);
			printf("dev%d.family_id %u\n", i, gi.family_id);
			printf("dev%d.chip_external_rev %u\n", i, gi.chip_external_rev);
			printf("dev%d.num_shader_engines %u\n", i, gi.num_shader_engines);
			printf("dev%d.cu_active_number %u\n", i, gi.cu_active_number);
			printf("dev%d.gpu_counter_freq %u\n", i, gi.gpu_counter_freq);
			printf("dev%d.gb_addr_cfg 0x%x\n", i, gi.gb_addr_cfg);
		}
		name = amdgpu_get_marketing_name(dev[i]);
		printf("dev%d.marketing_name %s\n", i, name ? name : "(none)");
		bad_queries(i, fd);
		close(fd);	/* libdrm keeps its own duplicate */
	}
	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++)
			if (!dev[i] || dev[i] == dev[j])
				distinct = 0;
	if (!dev[n - 1])
		distinct = 0;
	printf("handles_distinct %s\n", distinct ? "yes" : "no");
	for (i = 0; i < n; i++)
		if (dev[i] && amdgpu_device_deinitialize(dev[i]))
			rc = 1;
	printf("deinit %d\n", rc);
	return rc;
}
