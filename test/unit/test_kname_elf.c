// SPDX-License-Identifier: GPL-2.0
/*
 * test_kname_elf - kfdsim's code-object walker (test/kfdsim/kname_elf.c),
 * built in user space with ASan/UBSan: a well-formed image (DT_HASH or
 * DT_GNU_HASH only) gives the kernel descriptor's name; truncated images,
 * a looping hash chain, offsets outside the image and huge counts are
 * refused; and random corruption of a good image never reads outside it
 * (every image is a malloc of exactly its length, so ASan sees one byte
 * past) nor returns an unterminated name.
 *
 *   build/test_kname_elf [SEED [ROUNDS]]
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "../kfdsim/kname_elf.h"

#define IMG 4096
#define O_PH 64		/* PT_LOAD, PT_DYNAMIC */
#define O_DYN 256
#define O_SYM 512	/* 4 symbols: null, work (func), work.kd, other.kd */
#define O_HASH 640
#define O_GNU 704
#define O_STR 768
#define O_KD 1024	/* work.kd's value */
#define O_KD2 1088	/* other.kd's value */

static void put(uint8_t *b, size_t off, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		b[off + i] = (uint8_t)(v >> (8 * i));
}

static const char strs[] = "\0_Z4workyyPi\0_Z4workyyPi.kd\0scale.kd\0";

/* A loaded AMDGPU code object as ROCr leaves it at its base. */
static void build(uint8_t *b, int gnu_only)
{
	int d = O_DYN;

	memset(b, 0, IMG);
	memcpy(b, "\177ELF", 4);
	b[4] = 2;	/* ELFCLASS64 */
	b[5] = 1;	/* little-endian */
	put(b, 16, 3, 2);	/* ET_DYN */
	put(b, 18, KS_EM_AMDGPU, 2);
	put(b, 32, O_PH, 8);
	put(b, 54, 56, 2);
	put(b, 56, 2, 2);
	put(b, O_PH, 1, 4);		/* PT_LOAD at 0 */
	put(b, O_PH + 32, IMG, 8);
	put(b, O_PH + 56, 2, 4);	/* PT_DYNAMIC */
	put(b, O_PH + 56 + 16, O_DYN, 8);
	put(b, O_PH + 56 + 32, 7 * 16, 8);
#define DYN(t, v) do { put(b, d, t, 8); put(b, d + 8, v, 8); d += 16; } while (0)
	if (gnu_only)
		DYN(0x6ffffef5, O_GNU);
	else
		DYN(4, O_HASH);
	DYN(6, O_SYM);
	DYN(5, O_STR);
	DYN(10, sizeof(strs));
	DYN(11, 24);
	DYN(0, 0);
	/* symbols: 1 work (func, value 0x1100), 2 work.kd, 3 scale.kd */
	put(b, O_SYM + 24, 1, 4);
	put(b, O_SYM + 24 + 8, 0x1100, 8);
	put(b, O_SYM + 48, 13, 4);
	put(b, O_SYM + 48 + 8, O_KD, 8);
	put(b, O_SYM + 72, 28, 4);
	put(b, O_SYM + 72 + 8, O_KD2, 8);
	/* .hash: nbucket 1, nchain 4, bucket[0] 3, chain 3->2->1->0 */
	put(b, O_HASH, 1, 4);
	put(b, O_HASH + 4, 4, 4);
	put(b, O_HASH + 8, 3, 4);
	put(b, O_HASH + 12 + 4 * 3, 2, 4);
	put(b, O_HASH + 12 + 4 * 2, 1, 4);
	/* .gnu.hash: nbucket 1, symoffset 1, bloom 1, shift 0; bucket 1; chains 1,2,3(end) */
	put(b, O_GNU, 1, 4);
	put(b, O_GNU + 4, 1, 4);
	put(b, O_GNU + 8, 1, 4);
	put(b, O_GNU + 24, 1, 4);
	put(b, O_GNU + 28, 0, 4);
	put(b, O_GNU + 32, 0, 4);
	put(b, O_GNU + 36, 1, 4);
	memcpy(b + O_STR, strs, sizeof(strs));
}

/* Walk a malloc'd copy of exactly @len bytes of @b: ASan catches any read past it. */
static enum ks_elf_err walk(const uint8_t *b, size_t len, uint64_t value, char *name, unsigned int size)
{
	uint8_t *c = malloc(len ? len : 1);
	enum ks_elf_err e;

	memcpy(c, b, len);
	e = ks_elf_sym_name(c, len, value, name, size);
	free(c);
	return e;
}

int main(int argc, char **argv)
{
	unsigned int seed = argc > 1 ? (unsigned int)atoi(argv[1]) : 1;
	long rounds = argc > 2 ? atol(argv[2]) : 200000, i, found = 0, bad = 0;
	static uint8_t b[IMG], m[IMG];
	char name[64];
	bool ok;

	tap_start(12);
	build(b, 0);
	tap_ok(walk(b, IMG, O_KD, name, sizeof(name)) == KS_ELF_FOUND && !strcmp(name, "_Z4workyyPi"),
	       "kname_elf: DT_HASH image: kernel_object - base names _Z4workyyPi (got \"%s\")", name);
	tap_ok(walk(b, IMG, O_KD2, name, sizeof(name)) == KS_ELF_FOUND && !strcmp(name, "scale"),
	       "kname_elf: a second kernel descriptor names scale, .kd cut (got \"%s\")", name);
	tap_ok(walk(b, IMG, 0x1100, name, sizeof(name)) == KS_ELF_FOUND && !strcmp(name, "_Z4workyyPi"),
	       "kname_elf: a symbol without .kd is named as it is (got \"%s\")", name);
	tap_ok(walk(b, IMG, 0x1234, name, sizeof(name)) == KS_ELF_NO_SYM && !name[0],
	       "kname_elf: a value no symbol has: not found, empty name");
	tap_ok(walk(b, IMG, O_KD, name, 5) == KS_ELF_FOUND && !strcmp(name, "_Z4w"),
	       "kname_elf: a name longer than the buffer is cut and terminated (got \"%s\")", name);
	build(b, 1);
	tap_ok(walk(b, IMG, O_KD2, name, sizeof(name)) == KS_ELF_FOUND && !strcmp(name, "scale"),
	       "kname_elf: DT_GNU_HASH only: the symbol count from the chains names scale (got \"%s\")", name);

	/* Truncated: every length short of the strings' end is refused, never read past. */
	build(b, 0);
	ok = true;
	for (i = 0; i < O_STR + (long)sizeof(strs) - 1; i++)
		ok &= walk(b, i, O_KD, name, sizeof(name)) != KS_ELF_FOUND && !name[0];
	tap_ok(ok, "kname_elf: every truncation of the image before its last name's end is refused");

	/* Hash chains that loop: the walk scans by index, so it ends. */
	memcpy(m, b, IMG);
	put(m, O_HASH + 12 + 4 * 2, 2, 4);	/* 2 -> 2 */
	put(m, O_HASH + 12 + 4 * 3, 3, 4);	/* 3 -> 3 */
	ok = walk(m, IMG, O_KD2, name, sizeof(name)) == KS_ELF_FOUND && !strcmp(name, "scale");
	build(m, 1);
	put(m, O_GNU + 32, 0, 4);
	put(m, O_GNU + 36, 0, 4);	/* no end bit anywhere */
	memset(m + O_STR, 0, IMG - O_STR);	/* nor after it */
	ok &= walk(m, IMG, O_KD2, name, sizeof(name)) == KS_ELF_BAD;
	tap_ok(ok, "kname_elf: a DT_HASH chain looping on itself still names; a DT_GNU_HASH chain without an end is refused");

	/* Offsets outside the image. */
	ok = true;
	memcpy(m, b, IMG); put(m, 32, IMG - 8, 8);			/* e_phoff */
	ok &= walk(m, IMG, O_KD, name, sizeof(name)) == KS_ELF_BAD;
	memcpy(m, b, IMG); put(m, O_PH + 56 + 16, ~0ull - 8, 8);	/* PT_DYNAMIC vaddr */
	ok &= walk(m, IMG, O_KD, name, sizeof(name)) == KS_ELF_BAD;
	memcpy(m, b, IMG); put(m, O_DYN + 24, IMG, 8);			/* DT_SYMTAB */
	ok &= walk(m, IMG, O_KD, name, sizeof(name)) == KS_ELF_BAD;
	memcpy(m, b, IMG); put(m, O_DYN + 40, ~0ull, 8);		/* DT_STRTAB */
	ok &= walk(m, IMG, O_KD, name, sizeof(name)) == KS_ELF_BAD;
	memcpy(m, b, IMG); put(m, O_DYN + 56, ~0ull, 8);		/* DT_STRSZ */
	ok &= walk(m, IMG, O_KD, name, sizeof(name)) == KS_ELF_BAD;
	memcpy(m, b, IMG); put(m, O_SYM + 48, 0xffffffff, 4);		/* st_name */
	ok &= walk(m, IMG, O_KD, name, sizeof(name)) != KS_ELF_FOUND;
	tap_ok(ok, "kname_elf: program headers, dynamic section, symbols or strings outside the image are refused");

	/* Huge counts. */
	ok = true;
	memcpy(m, b, IMG); put(m, O_HASH + 4, 0xffffffff, 4);		/* nchain */
	ok &= walk(m, IMG, O_KD, name, sizeof(name)) == KS_ELF_BAD;
	memcpy(m, b, IMG); put(m, 56, 0xffff, 2);			/* e_phnum */
	ok &= walk(m, IMG, O_KD, name, sizeof(name)) == KS_ELF_BAD;
	memcpy(m, b, IMG); put(m, O_PH + 56 + 32, ~0ull, 8);		/* PT_DYNAMIC size */
	ok &= walk(m, IMG, O_KD, name, sizeof(name)) == KS_ELF_BAD;
	build(m, 1); put(m, O_GNU, 0xffffffff, 4);			/* nbucket */
	ok &= walk(m, IMG, O_KD2, name, sizeof(name)) == KS_ELF_BAD;
	tap_ok(ok, "kname_elf: a symbol count, header count or table size beyond the image is refused");

	ok = true;
	memcpy(m, b, IMG); put(m, 18, 62, 2);				/* EM_X86_64 */
	ok &= walk(m, IMG, O_KD, name, sizeof(name)) == KS_ELF_NOT_ELF;
	memcpy(m, b, IMG); m[4] = 1;					/* ELFCLASS32 */
	ok &= walk(m, IMG, O_KD, name, sizeof(name)) == KS_ELF_NOT_ELF;
	tap_ok(ok, "kname_elf: an ELF of another machine or class is not taken");

	/* Random corruption: never out of bounds (ASan), the name always terminated. */
	srand(seed);
	ok = true;
	for (i = 0; i < rounds; i++) {
		size_t len = rand() % 8 ? IMG : (size_t)(rand() % IMG);
		int n = 1 + rand() % 8, k;
		enum ks_elf_err e;

		build(m, rand() & 1);
		for (k = 0; k < n; k++) {
			/* Mostly the headers and tables, sometimes any byte. */
			size_t off = rand() % 4 ? (size_t)rand() % (O_STR + sizeof(strs)) :
				     (size_t)rand() % IMG;

			m[off] = rand() % 3 ? (uint8_t)rand() : (rand() & 1 ? 0xff : 0);
		}
		memset(name, 'x', sizeof(name));
		e = walk(m, len, rand() % 2 ? O_KD : rand() % IMG, name, 1 + rand() % sizeof(name));
		found += e == KS_ELF_FOUND;
		bad += e == KS_ELF_BAD;
		if (!memchr(name, 0, sizeof(name)) || (e != KS_ELF_FOUND && name[0])) {
			ok = false;
			printf("# round %ld: result %d, name not terminated or set on failure\n", i, e);
			break;
		}
	}
	tap_ok(ok, "kname_elf: %ld randomly corrupted images (seed %u): %ld named, %ld refused as bad, none read out of bounds",
	       rounds, seed, found, bad);
	return tap_done();
}
