# SPDX-License-Identifier: GPL-2.0
#
# gpreempt top-level Makefile.
#
#   make            build gpreempt.ko (and kfdsim.ko, test modules and tools)
#   make module     only gpreempt.ko, what a user installs (no test modules)
#   make install    gpreempt.ko, gpreemptctl, its man page, the unit, hooks
#                   (PREFIX=/usr/local, DESTDIR=); install-tools: all but the
#                   module (with DKMS); uninstall: what install put there
#   make KVER=<v>   the modules for one cached kernel, in build/<v>/
#   make matrix     the modules for every cached kernel (6.1, 6.12, 7.x)
#   make check      unit tests + VM tests (real amdgpu.ko and kfdsim), TAP
#   make demo       LC/BE demo on the simulated GPU (gpload, then HIP), with and without gpreempt
#   make bench      the headline benchmark, about 22 min (bench/out/)
#   make bench-full every benchmark scenario and sweep, over an hour
#   make bench-sweep the microbench at six LC rates, about 22 min (bench/out-sweep/)
#   make bench-sweep-hip Debian's HIP, short LC kernels at four rates, ~15 min (bench/out-sweep-hip/)
#   make bench-llama llama-server (LC) and llama-finetune (BE), forky root (bench/out-llama/)
#   make soak       long runs and races on kfdsim, memory-debugging guest (~30 min)
#   make lint       checkpatch --strict and sparse on module code
#
# Kernel: with KDIR unset, the Debian 6.12 kernel that scripts/setup cached
# (.cache/kernel.env) if present, else the running kernel.  The KFD layout
# comes from BTF: /sys/kernel/btf/{vmlinux,amdgpu} of the running kernel, or
# the cached vmlinux + amdgpu.ko (override with BTF_BASE=/BTF_KFD=); without
# it, from KFD source (KFD_SRC=, KFD_KO=; see "KFD layout" below).

TOP := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
BUILD := build
CACHE := $(or $(GP_CACHE),$(TOP)/.cache)

# --- kernel matrix: make KVER=<kver> / make matrix ---------------------------
# KVER is one of the kernels scripts/setup cached ($(CACHE)/kernels/*.env),
# by full name (6.1.0-56-amd64) or series (6.1, 6.12, 7).  Its modules and
# generated headers go to build/<kver>/ (a tree of links to the sources, so
# several kernels build side by side); kernels newer than the host's
# toolchain (7.x) build inside their GP_BUILDROOT with bwrap.
ifneq ($(KVER),)
KENV := $(firstword $(wildcard $(CACHE)/kernels/$(KVER).env) \
	  $(sort $(wildcard $(CACHE)/kernels/$(KVER).*.env)))
ifeq ($(KENV),)
$(error KVER=$(KVER): not a cached kernel (have: $(patsubst %.env,%,$(notdir $(wildcard $(CACHE)/kernels/*.env)))); run scripts/setup)
endif
include $(KENV)
KDIR := $(GP_KDIR)
BTF_BASE := $(GP_VMLINUX)
BTF_KFD := $(GP_AMDGPU_KO)
MDIR := $(TOP)/build/$(GP_KVER)
BUILD := $(MDIR)/build
KBUILD_RUN := $(if $(GP_BUILDROOT),bwrap --bind $(GP_BUILDROOT) / --bind $(TOP) $(TOP) --proc /proc --dev /dev --chdir $(TOP))
else
-include $(CACHE)/kernel.env
MDIR := $(TOP)
endif
GP_MATRIX_KVERS = $(patsubst %.env,%,$(notdir $(wildcard $(CACHE)/kernels/*.env)))

ifeq ($(KDIR),)
ifneq ($(GP_KDIR),)
KDIR := $(GP_KDIR)
BTF_BASE ?= $(GP_VMLINUX)
BTF_KFD ?= $(GP_AMDGPU_KO)
else
KDIR := /lib/modules/$(shell uname -r)/build
BTF_BASE ?= /sys/kernel/btf/vmlinux
BTF_KFD ?= /sys/kernel/btf/amdgpu
endif
endif

# The kernel headers, checked first for what builds modules: without them
# kbuild's own error says little.
ifneq ($(filter all module modules install matrix,$(or $(MAKECMDGOALS),all)),)
# A kernel of the matrix builds inside its build root (GP_BUILDROOT): its
# headers are there, not on the host.
GP_HDR_KVER := $(or $(GP_KVER),$(shell uname -r))
ifeq ($(wildcard $(GP_BUILDROOT)$(KDIR)/Makefile),)
$(error no kernel headers at $(GP_BUILDROOT)$(KDIR): install linux-headers-$(GP_HDR_KVER) (Debian, Ubuntu) or kernel-devel-$(GP_HDR_KVER) (RHEL family), or set KDIR=<a kernel build tree>; gpreemptctl doctor checks this)
endif
endif

CC_USER ?= gcc
CFLAGS_USER ?= -O2 -g -Wall -Wextra -Werror
CLANG ?= clang
BPFTOOL ?= $(shell command -v bpftool || echo /usr/sbin/bpftool)
GP_KVER_INSTALL ?= $(or $(GP_KVER),$(shell uname -r))

GEN := $(BUILD)/gp_layout.h $(BUILD)/gp_maps.lskel.h $(BUILD)/inc/bpf/skel_internal.h
TOOLS := $(BUILD)/btf-layout $(BUILD)/gpload $(BUILD)/gpreemptctl $(BUILD)/fuse-stall \
	 $(BUILD)/kfdmem-client
# Debian's libhsakmt (ROCm's thunk, scripts/setup installs it) on kfdsim's /dev/kfd
HSAKMT_H := $(wildcard /usr/include/hsakmt.h)
TOOLS += $(if $(HSAKMT_H),$(BUILD)/hsakmt-open $(BUILD)/sdma-client $(BUILD)/blit-client)
# Debian's libdrm_amdgpu (libdrm-dev, scripts/setup installs it) on kfdsim's DRM nodes
DRM_AMDGPU_H := $(wildcard /usr/include/libdrm/amdgpu.h)
TOOLS += $(if $(DRM_AMDGPU_H),$(BUILD)/drm-client)
# Debian's ROCr (libhsa-runtime-dev, scripts/setup installs it) on kfdsim's /dev/kfd
HSA_H := $(wildcard /usr/include/hsa/hsa.h)
TOOLS += $(if $(HSA_H),$(BUILD)/rocr-client)
# Debian's HIP (hipcc, libamdhip64-dev; scripts/setup installs them) for the
# gfx908 kfdsim's topology shows; without hipcc test/vm/long-hip.sh skips.
HIPCC ?= $(shell command -v hipcc)
HIP_ARCH ?= gfx908
TOOLS += $(if $(HIPCC),$(BUILD)/hip-work)

.PHONY: all module modules matrix tools nri setup setup-forky check check-defences check-long unit vmtest demo bench bench-full bench-sweep bench-sweep-hip bench-llama soak lint clean \
	install install-tools uninstall
all: modules tools nri

setup:
	@$(TOP)/scripts/setup

# The opt-in forky root with ROCm 6.4 and llama.cpp (issue 42), alone.
setup-forky:
	@$(TOP)/scripts/setup forky

$(BUILD):
	@mkdir -p $@

# --- BTF layout -------------------------------------------------------------
$(BUILD)/btf-layout: $(TOP)/scripts/btf-layout.c | $(BUILD)
	$(CC_USER) $(CFLAGS_USER) -o $@ $< -lbpf

# Raw BTF from a file: an ELF's .BTF section (vmlinux, .ko) or a raw blob.
define raw_btf
	if [ "$$(head -c 4 $(1) | od -An -tx1 | tr -d ' ')" = 7f454c46 ]; then \
		objcopy --dump-section .BTF=$(2) $(1) /dev/null; \
	else cp $(1) $(2); fi
endef

$(BUILD)/base.btf: $(BTF_BASE) | $(BUILD)
	@test -r "$(BTF_BASE)" || { echo "error: no vmlinux BTF at '$(BTF_BASE)': this kernel has none (CONFIG_DEBUG_INFO_BTF); set BTF_BASE=<its vmlinux with a .BTF section> (for the test harness's cached Debian kernels: scripts/setup)"; exit 1; }
	@$(call raw_btf,$<,$@)

$(BUILD)/kfd.btf: $(BTF_KFD) | $(BUILD)
	@test -r "$(BTF_KFD)" || { echo "error: no amdgpu BTF at '$(BTF_KFD)': load amdgpu, or set BTF_KFD=<amdgpu.ko with a .BTF section> (ROCm amdgpu-dkms: rebuild it with BTF, see docs/kernels.md, 'On a ROCm DKMS machine')"; exit 1; }
	@$(call raw_btf,$<,$@)

# The GNU build id of the KFD binary the layout comes from: insmod accepts a
# KFD without BTF only if it is that very binary (module/kfd/layout_check.c).
ifneq ($(filter /sys/kernel/btf/%,$(BTF_KFD)),)
KFD_BUILD_ID = $(shell od -An -v -tx1 -j16 /sys/module/$(notdir $(BTF_KFD))/notes/.note.gnu.build-id 2>/dev/null | tr -d ' \n')
else
KFD_BUILD_ID = $(shell readelf -n $(BTF_KFD) 2>/dev/null | awk '/Build ID:/ { print $$3; exit }')
endif

# The layout comes from BTF when the KFD's BTF file exists; else from a KFD
# source tree (scripts/kfd-src-layout): KFD_SRC=<drivers/gpu/drm/amd of a
# kernel source, or a ROCm DKMS /usr/src/amdgpu-<version>/>, by default the
# amdgpu-dkms tree `dkms status` says was built for the kernel
# (scripts/amdgpu-dkms-src); a DKMS tree is configured for KDIR's kernel by
# its own configure step, or takes KFD_DKMS_CONFIG=<the config.h an amdgpu
# DKMS build wrote>.  KFD_KO=<the amdgpu.ko built from it>, by default the
# one modprobe loads (modinfo -k <kver> -n amdgpu), records its build id, the
# only amdgpu insmod then accepts.  KFD_SRC= on the command line wins over BTF.
KFD_SRC_AUTO = $(shell $(TOP)/scripts/amdgpu-dkms-src $(GP_KVER_INSTALL) 2>/dev/null)
ifneq ($(filter command environment,$(origin KFD_SRC)),)
LAYOUT_FROM := src
else ifneq ($(wildcard $(BTF_KFD)),)
LAYOUT_FROM := btf
else
KFD_SRC := $(patsubst %/,%,$(KFD_SRC_AUTO))
LAYOUT_FROM := $(if $(KFD_SRC),src,none)
endif
ifeq ($(LAYOUT_FROM),src)
KFD_KO ?= $(shell modinfo -k $(GP_KVER_INSTALL) -n amdgpu 2>/dev/null | grep '^/')
endif

# What the layout came from: a change (BTF <-> source, another tree or .ko)
# regenerates it.
LAYOUT_KEY := $(LAYOUT_FROM) $(KFD_SRC) $(KFD_KO) $(KFD_DKMS_CONFIG) $(BTF_KFD) $(BTF_BASE)
$(shell mkdir -p $(BUILD) && { [ "$$(cat $(BUILD)/layout.from 2>/dev/null)" = "$(LAYOUT_KEY)" ] || echo "$(LAYOUT_KEY)" > $(BUILD)/layout.from; })

ifeq ($(LAYOUT_FROM),btf)
$(BUILD)/gp_layout.h: $(BUILD)/btf-layout $(BUILD)/base.btf $(BUILD)/kfd.btf $(TOP)/scripts/layout.spec $(BUILD)/layout.from
	@echo "  GEN     $@"
	@$(BUILD)/btf-layout --from "$(BTF_KFD)" --build-id "$(KFD_BUILD_ID)" \
		$(BUILD)/base.btf $(BUILD)/kfd.btf $(TOP)/scripts/layout.spec > $@.tmp || { rm -f $@.tmp; exit 1; }
	@mv $@.tmp $@
else ifeq ($(LAYOUT_FROM),src)
$(BUILD)/gp_layout.h: $(TOP)/scripts/kfd-src-layout $(TOP)/scripts/layout.spec $(BUILD)/layout.from
	@test -d "$(KFD_SRC)" || { echo "error: KFD_SRC=$(KFD_SRC): no such directory"; exit 1; }
	@echo "  GEN     $@ (from KFD source $(KFD_SRC)$(if $(KFD_KO), for $(KFD_KO), no KFD_KO: insmod will need the KFD's BTF))"
	@$(TOP)/scripts/kfd-src-layout --from "$(KFD_SRC)" $(if $(KFD_KO),--ko "$(KFD_KO)") \
		$(if $(KFD_DKMS_CONFIG),--dkms-config "$(KFD_DKMS_CONFIG)") \
		$(if $(KBUILD_RUN),--kbuild-run "$(KBUILD_RUN) --ro-bind $(realpath $(KFD_SRC)) $(realpath $(KFD_SRC))") \
		$(KDIR) $(KFD_SRC) $(TOP)/scripts/layout.spec $(BUILD)/kfd-src-probe > $@.tmp || { rm -f $@.tmp; exit 1; }
	@mv $@.tmp $@
else
$(BUILD)/gp_layout.h:
	@echo "error: no KFD layout source: no amdgpu BTF at '$(BTF_KFD)' and no KFD source tree."
	@echo "  Load amdgpu (its BTF is /sys/kernel/btf/amdgpu), or set BTF_KFD=<amdgpu.ko with .BTF>"
	@echo "  (for the tests without a GPU, scripts/setup caches Debian kernels);"
	@echo "  on a ROCm DKMS machine rebuild amdgpu with BTF (AMDGPU_BTF=1 dkms install --force amdgpu/<version>),"
	@echo "  or build amdgpu-dkms for this kernel (dkms status -k <kver> amdgpu), or set KFD_SRC=<tree>."
	@exit 1
endif

# --- BPF maps (light skeleton compiled into the module) ----------------------
$(BUILD)/gp_maps.bpf.o: $(TOP)/bpf/gp_maps.bpf.c $(TOP)/bpf/gp_maps.h | $(BUILD)
	$(CLANG) -g -O2 -target bpf -I/usr/include/x86_64-linux-gnu -I$(TOP)/bpf -c $< -o $@

# libbpf-dev's skel_internal.h (its __KERNEL__ branch), alone on the module's
# include path: the rest of /usr/include must not leak into kernel code.
# Its strncpy() is gone from 7.x kernels: strscpy_pad() (5.x+) does the same.
$(BUILD)/inc/bpf/skel_internal.h: /usr/include/bpf/skel_internal.h
	@mkdir -p $(dir $@)
	sed 's/\bstrncpy(/strscpy_pad(/g' $< > $@

$(BUILD)/gp_maps.lskel.h: $(BUILD)/gp_maps.bpf.o
	$(BPFTOOL) gen skeleton -L $< name gp_maps > $@.tmp && mv $@.tmp $@

# --- kernel modules ------------------------------------------------------------
modules: $(GEN)
ifneq ($(MDIR),$(TOP))
	@# Sources only: a link to a generated file (*.mod.c) would let this
	@# kernel's modpost write another kernel's file (issue 21).
	@find $(MDIR) -name '*.mod.c' -type l -delete 2>/dev/null || true
	@cd $(TOP) && find Kbuild module hooks bpf test/kfdsim \( -name '*.[ch]' -o -name Kbuild \) \
		! -name '*.mod.c' | \
		while read -r f; do mkdir -p "$(MDIR)/$$(dirname "$$f")" && ln -sfn "$(TOP)/$$f" "$(MDIR)/$$f"; done
endif
	$(KBUILD_RUN) $(MAKE) -C $(KDIR) M=$(MDIR) $(if $(GP_DKMS),GP_DKMS=1) modules
	@# Headers without vmlinux (Debian 6.1) make kbuild skip module BTF.
	@# kfdsim needs it as amdgpu has it: gpreempt checks the layout against
	@# it at insmod (module/kfd/layout_check.c).  Same pahole step as kbuild's.
	@ko=$(MDIR)/test/kfdsim/kfdsim.ko; if [ -f $$ko ] && ! readelf -S $$ko | grep -q ' \.BTF '; then \
		echo "  BTF     $$ko (on $(BTF_BASE))"; \
		LLVM_OBJCOPY=objcopy pahole -J --btf_base $(BTF_BASE) $$ko || exit 1; fi
ifeq ($(MDIR)$(GP_DKMS),$(TOP))
	@# kfdsim with one field moved: gpreempt must refuse it (test/vm/sim-layout.sh)
	@mkdir -p $(BUILD)/kfdsim-skew && find $(BUILD)/kfdsim-skew -name '*.mod.c' -type l -delete && cd $(TOP)/test/kfdsim && \
		for f in *.[ch] Kbuild; do case $$f in *.mod.c) continue ;; esac; \
			ln -sfn "$(TOP)/test/kfdsim/$$f" "$(abspath $(BUILD))/kfdsim-skew/$$f"; done
	$(KBUILD_RUN) $(MAKE) -C $(KDIR) M=$(abspath $(BUILD))/kfdsim-skew KCFLAGS=-DKS_SKEW=8 modules
	@# gpreempt built for kfdsim's build id (next to kfdsim without .BTF,
	@# the build-id check passes): live-ok with the right layout, live-skew
	@# with kfd_process's pdds, n_pdds, pqm and debug_trap_enabled 16 bytes
	@# later, as a DKMS tree read without its config.h gives.  The live
	@# layout check must refuse live-skew (test/vm/sim-layout.sh).
	@for v in ok skew; do d=$(abspath $(BUILD))/live-$$v; \
		mkdir -p $$d/bpf $$d/build && \
		find $$d -name '*.mod.c' -type l -delete && \
		ln -sfn $(TOP)/Kbuild $$d/ && \
		for f in $$(cd $(TOP) && find module hooks \( -name '*.[ch]' -o -name Kbuild \) ! -name '*.mod.c'); do \
			mkdir -p $$d/$${f%/*} && ln -sfn $(TOP)/$$f $$d/$$f || exit 1; done && \
		ln -sfn $(TOP)/bpf/gp_maps.h $(TOP)/bpf/gp_lat.h $(TOP)/bpf/gp_version.h $$d/bpf/ && \
		ln -sfn $(abspath $(BUILD))/gp_maps.lskel.h $(abspath $(BUILD))/inc $$d/build/ && \
		$(TOP)/test/layout/layout-variant --ko $(TOP)/test/kfdsim/kfdsim.ko \
			$$([ $$v = skew ] && for m in pdds n_pdds pqm debug_trap_enabled; do \
				echo --shift kfd_process.$$m=16; done) \
			< $(BUILD)/gp_layout.h > $$d/build/gp_layout.h.tmp || exit 1; \
		cmp -s $$d/build/gp_layout.h.tmp $$d/build/gp_layout.h || \
			mv $$d/build/gp_layout.h.tmp $$d/build/gp_layout.h; rm -f $$d/build/gp_layout.h.tmp; \
		$(KBUILD_RUN) $(MAKE) -C $(KDIR) M=$$d modules || exit 1; done
	@# gpreempt with the test-only race windows (module/testing.c, review
	@# S3 F18), for the race tests alone; module/gpreempt.ko has none.
	@d=$(abspath $(BUILD))/testing; mkdir -p $$d/bpf $$d/build && \
		find $$d -name '*.mod.c' -type l -delete && \
		ln -sfn $(TOP)/Kbuild $$d/ && \
		for f in $$(cd $(TOP) && find module hooks \( -name '*.[ch]' -o -name Kbuild \) ! -name '*.mod.c'); do \
			mkdir -p $$d/$${f%/*} && ln -sfn $(TOP)/$$f $$d/$$f || exit 1; done && \
		ln -sfn $(TOP)/bpf/gp_maps.h $(TOP)/bpf/gp_lat.h $(TOP)/bpf/gp_version.h $$d/bpf/ && \
		ln -sfn $(abspath $(BUILD))/gp_maps.lskel.h $(abspath $(BUILD))/inc \
			$(abspath $(BUILD))/gp_layout.h $$d/build/ && \
		$(KBUILD_RUN) $(MAKE) -C $(KDIR) M=$$d GP_TESTING=y modules
endif
	@$(TOP)/scripts/ibt-check --gpreempt $(MDIR)/module/gpreempt.ko \
		$(if $(GP_AMDGPU_KO),--kfd $(GP_AMDGPU_KO)) \
		$$(test -f $(MDIR)/test/kfdsim/kfdsim.ko && echo --kfd $(MDIR)/test/kfdsim/kfdsim.ko) \
		> $(MDIR)/ibt-check.tap || { cat $(MDIR)/ibt-check.tap; \
		echo "error: IBT check failed (scripts/ibt-check): an indirect call could hit a sealed ENDBR"; exit 1; }

# Only gpreempt.ko (module/gpreempt.ko): kfdsim, the test builds and their
# pahole step are left out, as scripts/dkms-build does.
module:
	@$(MAKE) --no-print-directory GP_DKMS=1 modules

# Every cached kernel (scripts/setup), each into build/<kver>/.
matrix:
	@[ -n "$(GP_MATRIX_KVERS)" ] || { echo "error: no kernels cached: run scripts/setup"; exit 1; }
	@for k in $(GP_MATRIX_KVERS); do \
		echo "  MATRIX  $$k"; \
		$(MAKE) --no-print-directory KVER=$$k modules || exit 1; \
	done

# --- user-space tools ----------------------------------------------------------
tools: $(TOOLS)

$(BUILD)/test_policy: $(TOP)/test/unit/test_policy.c $(TOP)/module/policy/policy.c $(TOP)/module/policy/rate.c $(TOP)/module/policy/sleep.c \
		$(TOP)/module/policy/policy.h $(TOP)/test/unit/tap.h \
		$(TOP)/module/backends/cumask.c $(TOP)/module/backends/cumask.h | $(BUILD)
	$(CC_USER) $(CFLAGS_USER) -I$(TOP)/module -o $@ $(TOP)/test/unit/test_policy.c \
		$(TOP)/module/policy/policy.c $(TOP)/module/policy/rate.c $(TOP)/module/policy/sleep.c \
		$(TOP)/module/backends/cumask.c

$(BUILD)/gpload: $(wildcard $(TOP)/test/gpload/*.c $(TOP)/test/gpload/*.h $(TOP)/test/kfdsim/kfdsim_ioctl.h) | $(BUILD)
	$(CC_USER) $(CFLAGS_USER) -I$(TOP)/test/kfdsim -o $@ $(filter %.c,$^) -lm -lpthread

$(BUILD)/fuse-stall: $(TOP)/test/fuse-stall/fuse-stall.c | $(BUILD)
	$(CC_USER) $(CFLAGS_USER) -o $@ $<

$(BUILD)/kfdmem-client: $(TOP)/test/kfdmem-client/kfdmem-client.c | $(BUILD)
	$(CC_USER) $(CFLAGS_USER) -o $@ $< -lpthread -ldl

$(BUILD)/hsakmt-open: $(TOP)/test/hsakmt-open/hsakmt-open.c $(HSAKMT_H) $(TOP)/test/lib/aql.h | $(BUILD)
	$(CC_USER) $(CFLAGS_USER) -o $@ $< -lhsakmt

$(BUILD)/drm-client: $(TOP)/test/drm-client/drm-client.c $(DRM_AMDGPU_H) | $(BUILD)
	$(CC_USER) $(CFLAGS_USER) -I/usr/include/libdrm -o $@ $< -ldrm_amdgpu -ldrm

$(BUILD)/sdma-client: $(TOP)/test/sdma-client/sdma-client.c $(HSAKMT_H) | $(BUILD)
	$(CC_USER) $(CFLAGS_USER) -o $@ $< -lhsakmt

$(BUILD)/blit-client: $(TOP)/test/blit-client/blit-client.c $(HSAKMT_H) $(TOP)/test/lib/aql.h | $(BUILD)
	$(CC_USER) $(CFLAGS_USER) -o $@ $< -lhsakmt

$(BUILD)/rocr-client: $(TOP)/test/rocr-client/rocr-client.c $(HSA_H) | $(BUILD)
	$(CC_USER) $(CFLAGS_USER) -o $@ $< -lhsa-runtime64

$(BUILD)/hip-work: $(TOP)/test/hip/hip-work.hip | $(BUILD)
	$(HIPCC) --offload-arch=$(HIP_ARCH) -O2 -Wall -Werror -o $@ $<

# --- the NRI v2 plugin (tools/gpreempt-nri) and its test runtime -----------
# Go, built from Debian's packages only (no module proxy): golang-go and
# golang-github-containerd-nri-dev (the NRI project's stub and runtime side,
# trixie) in the trixie build root scripts/setup makes, run with bwrap; or
# NRI_ROOT=/ on a machine that has both installed.  Static binaries
# (CGO_ENABLED=0): they run on the host and in the test guest.  Without Go
# or the NRI package, "make nri" says so and builds nothing.
NRI_ROOT ?= $(CACHE)/root-trixie
NRI_DEPS := $(wildcard $(NRI_ROOT)/usr/bin/go $(NRI_ROOT)/usr/share/gocode/src/github.com/containerd/nri/pkg/stub/stub.go)
NRI_RUN := $(if $(filter /,$(NRI_ROOT)),,bwrap --bind $(NRI_ROOT) / --bind $(TOP) $(TOP) --proc /proc --dev /dev) \
	env GO111MODULE=off GOPATH=/usr/share/gocode GOPROXY=off GOFLAGS= GOTOOLCHAIN=local \
	GOCACHE=$(TOP)/build/.gocache CGO_ENABLED=0
ifeq ($(words $(NRI_DEPS)),2)
nri: $(TOP)/build/gpreempt-nri $(TOP)/build/nri-runtime $(TOP)/build/cri-client
$(TOP)/build/gpreempt-nri: $(wildcard $(TOP)/tools/gpreempt-nri/*.go) | $(BUILD)
	cd $(TOP)/tools/gpreempt-nri && $(NRI_RUN) go build -trimpath -o $@ .
$(TOP)/build/nri-runtime: $(wildcard $(TOP)/test/nri-runtime/*.go) | $(BUILD)
	cd $(TOP)/test/nri-runtime && $(NRI_RUN) go build -trimpath -o $@ .
$(TOP)/build/cri-client: $(wildcard $(TOP)/test/cri-client/*.go) | $(BUILD)
	cd $(TOP)/test/cri-client && $(NRI_RUN) go build -trimpath -o $@ .
else
nri:
	@echo "  SKIP    gpreempt-nri: no Go and NRI stub in $(NRI_ROOT) (golang-go, golang-github-containerd-nri-dev: run scripts/setup, or NRI_ROOT=/)"
endif

# --- gpreemptctl and install (tools/gpreemptctl, etc/, dkms.conf) -------------
# Its rooms, one job each: cli/ (main, the verbs' table), common/ (the shared
# header, util.c, hookparse.c), maps/, views/, rules/, hook/, doctor/, selftest/.
CTL_DIR := $(TOP)/tools/gpreemptctl
CTL_SRC := $(wildcard $(CTL_DIR)/*/*.c $(CTL_DIR)/*/*.h) $(TOP)/bpf/gp_maps.h $(TOP)/bpf/gp_lat.h $(TOP)/bpf/gp_version.h
# A static gpreemptctl, for hosts without libbpf or json-c (the runtime runs
# the hook on the host; deploy/Containerfile builds it so):
#   make build/gpreemptctl CTL_LDLIBS="-static -lbpf -lelf -lz -ljson-c"
CTL_LDLIBS ?= -lbpf -ljson-c
$(BUILD)/gpreemptctl: $(CTL_SRC) | $(BUILD)
	$(CC_USER) $(CFLAGS_USER) -I$(TOP)/bpf -I$(CTL_DIR)/common \
		-o $@ $(filter %.c,$^) $(CTL_LDLIBS)

DESTDIR ?=
PREFIX ?= /usr/local
SBINDIR ?= $(PREFIX)/sbin
MANDIR ?= $(PREFIX)/share/man
UNITDIR ?= /etc/systemd/system
# Container hooks (docs/containers.md): the OCI hooks.d files podman and
# CRI-O read, and the NRI v0.1 plugin of containerd 1.6 (/opt/nri/bin/<type>,
# a link to gpreemptctl, named in /etc/nri/conf.json; an existing conf.json
# is left alone: add the plugin to it from share/gpreempt/nri-conf.json).
# /etc/nri/conf.json is written only where containerd 1.6 runs (NRI_V01=yes;
# detected from containerd --version): containerd 1.7 and 2.x read it as
# NRI v2's and fail every container start if it names a plugin it cannot run.
OCI_HOOKS_DIR ?= /usr/share/containers/oci/hooks.d
NRI_BIN_DIR ?= /opt/nri/bin
NRI_V01 ?= $(shell containerd --version 2>/dev/null | grep -q ' v1\.6\.' && echo yes)
# Files that name gpreemptctl get its installed path (@SBINDIR@).
SUBST = sed 's|@SBINDIR@|$(SBINDIR)|g'
# install builds only what it installs (make module, gpreemptctl): run
# "make module build/gpreemptctl" as yourself first and nothing is left to
# build as root.
install: module install-tools
	install -D -m 0644 $(TOP)/module/gpreempt.ko $(DESTDIR)/lib/modules/$(GP_KVER_INSTALL)/extra/gpreempt.ko
	@test -n "$(DESTDIR)" || depmod $(GP_KVER_INSTALL)

# Everything but gpreempt.ko (DKMS installs the module: docs/kernels.md).
install-tools: $(BUILD)/gpreemptctl
	install -D -m 0755 $(BUILD)/gpreemptctl $(DESTDIR)$(SBINDIR)/gpreemptctl
	install -D -m 0644 $(TOP)/tools/gpreemptctl/gpreemptctl.8 $(DESTDIR)$(MANDIR)/man8/gpreemptctl.8
	$(SUBST) $(TOP)/etc/gpreempt.service > $(BUILD)/gpreempt.service
	install -D -m 0644 $(BUILD)/gpreempt.service $(DESTDIR)$(UNITDIR)/gpreempt.service
	$(SUBST) $(TOP)/etc/gpreempt-retry.service > $(BUILD)/gpreempt-retry.service
	install -D -m 0644 $(BUILD)/gpreempt-retry.service $(DESTDIR)$(UNITDIR)/gpreempt-retry.service
	install -D -m 0644 $(TOP)/etc/gpreempt-retry.timer $(DESTDIR)$(UNITDIR)/gpreempt-retry.timer
	$(SUBST) $(TOP)/etc/gpreempt-metrics.service > $(BUILD)/gpreempt-metrics.service
	install -D -m 0644 $(BUILD)/gpreempt-metrics.service $(DESTDIR)$(UNITDIR)/gpreempt-metrics.service
	@# The NRI v2 plugin and its unit, when make nri built it (Go).
	if [ -x $(BUILD)/gpreempt-nri ]; then \
		install -D -m 0755 $(BUILD)/gpreempt-nri $(DESTDIR)$(SBINDIR)/gpreempt-nri && \
		$(SUBST) $(TOP)/etc/gpreempt-nri.service > $(BUILD)/gpreempt-nri.service && \
		install -D -m 0644 $(BUILD)/gpreempt-nri.service $(DESTDIR)$(UNITDIR)/gpreempt-nri.service; \
	fi
	test -e $(DESTDIR)/etc/gpreempt.conf || install -D -m 0644 $(TOP)/etc/gpreempt.conf $(DESTDIR)/etc/gpreempt.conf
	test -e $(DESTDIR)/etc/modprobe.d/gpreempt.conf || install -D -m 0644 $(TOP)/etc/modprobe.d/gpreempt.conf $(DESTDIR)/etc/modprobe.d/gpreempt.conf
	for h in create poststop; do \
		$(SUBST) $(TOP)/etc/oci-hooks.d/gpreempt-$$h.json > $(BUILD)/gpreempt-$$h.json && \
		install -D -m 0644 $(BUILD)/gpreempt-$$h.json $(DESTDIR)$(OCI_HOOKS_DIR)/gpreempt-$$h.json || exit 1; \
	done
	install -D -m 0644 $(TOP)/etc/nri/conf.json $(DESTDIR)$(PREFIX)/share/gpreempt/nri-conf.json
	test "$(NRI_V01)" != yes || test -e $(DESTDIR)/etc/nri/conf.json || \
		install -D -m 0644 $(TOP)/etc/nri/conf.json $(DESTDIR)/etc/nri/conf.json
	install -d $(DESTDIR)$(NRI_BIN_DIR)
	ln -sfn $(SBINDIR)/gpreemptctl $(DESTDIR)$(NRI_BIN_DIR)/gpreempt

# What install and install-tools put there; /etc/gpreempt.conf and
# /etc/modprobe.d/gpreempt.conf are the administrator's and stay.  An
# /etc/nri/conf.json as install wrote it goes; one the administrator changed
# loses only gpreempt's plugin entry (jq), so that it names no plugin that
# is gone.  Stop the unit and unload the module first.
uninstall:
	rm -f $(DESTDIR)$(SBINDIR)/gpreemptctl $(DESTDIR)$(MANDIR)/man8/gpreemptctl.8 \
		$(DESTDIR)$(UNITDIR)/gpreempt.service \
		$(DESTDIR)$(UNITDIR)/gpreempt-retry.service $(DESTDIR)$(UNITDIR)/gpreempt-retry.timer \
		$(DESTDIR)$(UNITDIR)/gpreempt-metrics.service \
		$(DESTDIR)$(UNITDIR)/gpreempt-nri.service $(DESTDIR)$(SBINDIR)/gpreempt-nri \
		$(DESTDIR)$(OCI_HOOKS_DIR)/gpreempt-create.json $(DESTDIR)$(OCI_HOOKS_DIR)/gpreempt-poststop.json \
		$(DESTDIR)$(PREFIX)/share/gpreempt/nri-conf.json $(DESTDIR)$(NRI_BIN_DIR)/gpreempt \
		$(DESTDIR)/lib/modules/$(GP_KVER_INSTALL)/extra/gpreempt.ko
	-rmdir $(DESTDIR)$(PREFIX)/share/gpreempt 2>/dev/null
	@c=$(DESTDIR)/etc/nri/conf.json; \
	if cmp -s $$c $(TOP)/etc/nri/conf.json; then rm -f $$c; rmdir $(DESTDIR)/etc/nri 2>/dev/null; \
	elif [ -f $$c ] && jq -e '[.plugins[]? | select(.type == "gpreempt")] | length > 0' $$c >/dev/null 2>&1; then \
		jq --tab '.plugins |= map(select(.type != "gpreempt"))' $$c > $$c.tmp && \
		cat $$c.tmp > $$c && rm -f $$c.tmp && echo "  $$c: gpreempt's plugin entry removed"; \
	fi; true
	@test -n "$(DESTDIR)" || depmod $(GP_KVER_INSTALL)

# --- tests -------------------------------------------------------------------
# A runner's exit status fails the target even when it printed no failing line.
unit: tools
	@{ $(TOP)/test/run-unit || echo "not ok - test/run-unit exit status"; } | $(TOP)/scripts/tap-summary

vmtest: all
	@{ $(TOP)/test/run-vm || echo "not ok - test/run-vm exit status"; } | $(TOP)/scripts/tap-summary

# Every runner's exit status is a test of its own, so a runner that dies
# without printing a failing line still fails the run.  check is the test
# command CI runs (.ci/run): the unit tests, lint, and the default kernel's
# amdgpu and sim suites, under 30 minutes on the 2-core host.  check-long
# adds what takes minutes per test or grows with the matrix: every other
# cached kernel (build and reduced suite, and the 7.x teardown race:
# test/run-teardown), the container suite (oci: podman, containerd, NRI), the
# short soak, the fault and evasion tests, the minute-long kfdsim tests
# (long-*.sh) in the memory-debugging guest, and the DaemonSet image: its
# offline build, contents and DKMS build on the host (test/run-image), its
# node script in the guest (test/vm/long-image.sh).
# The host steps run two at a time (each is one process at a time, and the
# host has two cores); their lines are printed once both are done.
# timed CMD ARGS...: run $(TOP)/CMD; a failing exit status is a failing line,
# and each step's wall time is printed, so a slow CI run shows its slow step.
TIMED = timed() { t=$$(date +%s); $(TOP)/"$$@" || echo "not ok - $$* exit status"; \
	echo "\# $$*: $$(( $$(date +%s) - t )) s"; }

# Each switchable threat-model defence, switched off, fails its test line
# (test/defences.tsv); not part of make check.
check-defences:
	test/run-defences | scripts/tap-summary

check: setup
	@$(MAKE) --no-print-directory all
	@start=$$(date +%s); $(TIMED); h=$(TOP)/build/check-host; mkdir -p $$h; { { \
		{ timed test/run-unit; timed test/run-dkms-fixture; } >$$h/a.tap 2>&1 & \
		{ timed scripts/lint; timed test/run-src-layout; } >$$h/b.tap 2>&1; \
		wait $$!; cat $$h/a.tap $$h/b.tap; \
		timed test/run-vm; \
		} | tee $(TOP)/build/check.tap; \
		$(TOP)/test/unit/threat-model.sh --reached $(TOP)/build/check.tap check || \
			echo "not ok - test/unit/threat-model.sh --reached exit status"; \
		echo "# make check: $$(( $$(date +%s) - start )) s"; \
	} | $(TOP)/scripts/tap-summary

check-long: setup
	@$(MAKE) --no-print-directory all
	@$(MAKE) --no-print-directory matrix
	@start=$$(date +%s); $(TIMED); { { \
		timed test/run-image; \
		timed test/run-vm long oci; \
		timed test/run-matrix; \
		timed test/run-teardown; \
		timed test/run-checkout; \
		} | tee $(TOP)/build/check-long.tap; \
		$(TOP)/test/unit/threat-model.sh --reached $(TOP)/build/check-long.tap check-long || \
			echo "not ok - test/unit/threat-model.sh --reached exit status"; \
		echo "# make check-long: $$(( $$(date +%s) - start )) s"; \
	} | $(TOP)/scripts/tap-summary

demo: setup
	@$(MAKE) --no-print-directory all
	@$(TOP)/scripts/demo

bench: setup
	@$(MAKE) --no-print-directory all
	@$(TOP)/scripts/bench

bench-full: setup
	@$(MAKE) --no-print-directory all
	@$(TOP)/scripts/bench full

bench-sweep: setup
	@$(MAKE) --no-print-directory all
	@$(TOP)/scripts/bench sweep

bench-sweep-hip: setup
	@$(MAKE) --no-print-directory all
	@$(TOP)/scripts/bench sweep-hip

# llama.cpp from the forky root (make setup-forky first).
bench-llama: setup
	@$(MAKE) --no-print-directory all
	@$(TOP)/scripts/bench llama

# Not part of check: test/vm/long-soak.sh's long form (check runs its short form).
soak: setup
	@$(MAKE) --no-print-directory all
	@$(TOP)/scripts/soak

lint:
	@$(TOP)/scripts/lint

clean:
	$(MAKE) -C $(KDIR) M=$(TOP) clean || true
	rm -rf $(BUILD)
