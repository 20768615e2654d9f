// SPDX-License-Identifier: GPL-2.0
/*
 * kname_elf.c - the name of a kernel, from the code object ROCr loaded.
 *
 * ROCr's loader copies each PT_LOAD segment of a code object to base +
 * p_vaddr in GPU memory; the first one starts at file offset 0 and vaddr 0,
 * so the loaded image begins with the ELF header and holds the program
 * headers, the dynamic section, .dynsym, .hash and .dynstr, and the kernel
 * descriptors (name.kd) that a dispatch's kernel_object points at.  So
 * kernel_object - base is the st_value of one .dynsym entry.
 *
 * The image is user data: a process may write anything there, change it
 * while it is read, or leave it half copied.  Every field is read once into
 * a local, every offset is checked against @len before a read, every loop
 * has a fixed bound (the program headers' count, KS_ELF_MAX_DYN,
 * KS_ELF_MAX_SYMS, KS_ELF_MAX_MATCHES, KS_ELF_MAX_NAME), and nothing is
 * allocated.  The
 * symbols are scanned in index order, never by following hash chains, so a
 * chain that loops cannot loop the walk.
 */
#include "kname_elf.h"

#ifdef __KERNEL__
#include <linux/string.h>
#else
#include <string.h>
#endif

#define EHDR_SIZE 64
#define PHDR_SIZE 56
#define DYN_SIZE 16
#define SYM_SIZE 24
#define PT_DYNAMIC_ 2
#define DT_NULL_ 0
#define DT_HASH_ 4
#define DT_STRTAB_ 5
#define DT_SYMTAB_ 6
#define DT_STRSZ_ 10
#define DT_SYMENT_ 11
#define DT_GNU_HASH_ 0x6ffffef5ull

/* [off, off + n) inside [0, len) */
static bool in(u64 len, u64 off, u64 n)
{
	return off <= len && n <= len - off;
}

/* Little-endian loads; the caller checked the range. */
static u64 ld(const u8 *p, int n)
{
	u64 v = 0;

	while (n--)
		v = (v << 8) | p[n];
	return v;
}

/**
 * ks_elf_is_amdgpu() - whether an image starts with an AMDGPU ELF64 header
 * @img: image bytes
 * @len: bytes readable at @img
 *
 * Return: true for "\x7fELF", 64-bit, little-endian, e_machine EM_AMDGPU.
 */
bool ks_elf_is_amdgpu(const u8 *img, u64 len)
{
	return len >= EHDR_SIZE && !memcmp(img, "\177ELF", 4) && img[4] == 2 && img[5] == 1 &&
	       ld(img + 18, 2) == KS_EM_AMDGPU;
}

/*
 * The number of .dynsym entries from DT_GNU_HASH: one past the highest
 * symbol a bucket names, then along that chain to its end bit.  0 when the
 * table is outside the image.
 */
static u64 gnu_hash_nsyms(const u8 *img, u64 len, u64 gh)
{
	u64 nbucket, symoffset, nbloom, buckets, chains, i, max = 0;

	if (!in(len, gh, 16))
		return 0;
	nbucket = ld(img + gh, 4);
	symoffset = ld(img + gh + 4, 4);
	nbloom = ld(img + gh + 8, 4);
	if (nbucket > KS_ELF_MAX_SYMS || nbloom > KS_ELF_MAX_SYMS)
		return 0;
	buckets = gh + 16 + nbloom * 8;
	if (!in(len, buckets, nbucket * 4))
		return 0;
	for (i = 0; i < nbucket; i++) {
		u64 b = ld(img + buckets + i * 4, 4);

		if (b > max)
			max = b;
	}
	if (!max)
		return symoffset;
	if (max < symoffset || max >= KS_ELF_MAX_SYMS)
		return 0;
	chains = buckets + nbucket * 4;
	/* The chain of the highest bucket ends at an odd value. */
	for (i = max; i < KS_ELF_MAX_SYMS; i++) {
		u64 c = chains + (i - symoffset) * 4;

		if (!in(len, c, 4))
			return 0;
		if (ld(img + c, 4) & 1)
			return i + 1;
	}
	return 0;
}

/**
 * ks_elf_sym_name() - the name of the dynamic symbol at a value
 * @img: the loaded image, from its ELF header on
 * @len: bytes readable at @img (to the end of its buffer)
 * @value: the symbol's st_value (an address minus the image's base)
 * @name: where the name goes, NUL-terminated, without a ".kd" suffix
 * @size: bytes at @name (at least 1)
 *
 * Of several symbols at @value, one whose name ends in ".kd" (the kernel
 * descriptor) wins; a name longer than @size - 1 is cut.
 *
 * Return: KS_ELF_FOUND, or why not (enum ks_elf_err); @name is "" then.
 */
enum ks_elf_err ks_elf_sym_name(const u8 *img, u64 len, u64 value, char *name, u32 size)
{
	u64 phoff, phnum, phentsize, dyn = 0, dynsz = 0, symtab = 0, strtab = 0, strsz = 0;
	u64 hash = 0, gnu = 0, syment = SYM_SIZE, nsyms = 0, best = ~0ull, best_n = 0, i;
	unsigned int matches = 0;
	bool best_kd = false;

	name[0] = 0;
	if (!ks_elf_is_amdgpu(img, len))
		return KS_ELF_NOT_ELF;
	phoff = ld(img + 32, 8);
	phentsize = ld(img + 54, 2);
	phnum = ld(img + 56, 2);
	if (phentsize < PHDR_SIZE || !in(len, phoff, phnum * phentsize))
		return KS_ELF_BAD;
	for (i = 0; i < phnum; i++) {
		const u8 *ph = img + phoff + i * phentsize;

		if (ld(ph, 4) == PT_DYNAMIC_) {
			dyn = ld(ph + 16, 8);	/* p_vaddr: where it is in memory */
			dynsz = ld(ph + 32, 8);
			break;
		}
	}
	if (!dynsz || !in(len, dyn, dynsz))
		return KS_ELF_BAD;
	for (i = 0; i < dynsz / DYN_SIZE && i < KS_ELF_MAX_DYN; i++) {
		u64 tag = ld(img + dyn + i * DYN_SIZE, 8);
		u64 val = ld(img + dyn + i * DYN_SIZE + 8, 8);

		if (tag == DT_NULL_)
			break;
		else if (tag == DT_HASH_)
			hash = val;
		else if (tag == DT_GNU_HASH_)
			gnu = val;
		else if (tag == DT_SYMTAB_)
			symtab = val;
		else if (tag == DT_STRTAB_)
			strtab = val;
		else if (tag == DT_STRSZ_)
			strsz = val;
		else if (tag == DT_SYMENT_)
			syment = val;
	}
	if (!symtab || !strtab || syment < SYM_SIZE || syment > 256 || !in(len, strtab, strsz))
		return KS_ELF_BAD;
	if (hash && in(len, hash, 8))
		nsyms = ld(img + hash + 4, 4);	/* nchain: the symbol count */
	else if (gnu)
		nsyms = gnu_hash_nsyms(img, len, gnu);
	if (!nsyms || nsyms > KS_ELF_MAX_SYMS || !in(len, symtab, nsyms * syment))
		return KS_ELF_BAD;

	for (i = 1; i < nsyms && matches < KS_ELF_MAX_MATCHES; i++) {
		const u8 *s = img + symtab + i * syment;
		u64 st_name = ld(s, 4), n;
		bool kd;

		if (ld(s + 8, 8) != value || st_name >= strsz)
			continue;
		matches++;
		for (n = 0; n < KS_ELF_MAX_NAME && st_name + n < strsz &&
		     img[strtab + st_name + n]; n++)
			;
		if (!n || n == KS_ELF_MAX_NAME || st_name + n == strsz)
			continue;	/* empty, too long, or not terminated in .dynstr */
		kd = n > 3 && !memcmp(img + strtab + st_name + n - 3, ".kd", 3);
		if (best == ~0ull || kd) {
			best = st_name;
			best_n = n;
		}
		if (kd) {
			best_kd = true;
			break;
		}
	}
	if (best == ~0ull)
		return KS_ELF_NO_SYM;
	/* The length found above: the bytes may have changed since. */
	if (best_kd)
		best_n -= 3;
	for (i = 0; i + 1 < size && i < best_n; i++)
		name[i] = img[strtab + best + i] ?: '?';
	name[i] = 0;
	return KS_ELF_FOUND;
}
