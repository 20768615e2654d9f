/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kname_elf.h - find a kernel's name in a loaded AMDGPU code object: pure C,
 * no kernel calls, so the same file builds into kfdsim and into the host's
 * unit and property test (test/unit/test_kname_elf.c).
 */
#ifndef KS_KNAME_ELF_H
#define KS_KNAME_ELF_H

#include <linux/types.h>
#ifndef __KERNEL__
#include <stdbool.h>
#include <stddef.h>
#define u8 __u8
#define u16 __u16
#define u32 __u32
#define u64 __u64
#endif

#define KS_EM_AMDGPU 224
/* Symbols looked at per walk: a Tensile SGEMM object has ~15000. */
#define KS_ELF_MAX_SYMS 131072u
/* Symbols at the value looked for that are examined (two in a real object) */
#define KS_ELF_MAX_MATCHES 16
/* Longest name read, with its NUL; longer ones are not taken. */
#define KS_ELF_MAX_NAME 1024
/* PT_DYNAMIC entries read: lld writes about 10. */
#define KS_ELF_MAX_DYN 256

enum ks_elf_err {
	KS_ELF_FOUND = 0,
	KS_ELF_NOT_ELF,		/* no AMDGPU ELF64 little-endian header */
	KS_ELF_BAD,		/* a header, table or offset outside the image */
	KS_ELF_NO_SYM,		/* well formed, no symbol at that value */
};

bool ks_elf_is_amdgpu(const u8 *img, u64 len);
enum ks_elf_err ks_elf_sym_name(const u8 *img, u64 len, u64 value, char *name, u32 size);

#endif
