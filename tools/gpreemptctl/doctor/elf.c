// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * elf.c - GNU build ids for gpreemptctl doctor: of a loaded module
 * (its /sys/module/<m>/notes file) and of a module file (an ELF64 .ko,
 * or .ko.xz, .ko.zst, .ko.gz through xz, zstd, gzip).
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "gpreemptctl.h"
#include "report.h"
#include "elf.h"

/**
 * dr_note_build_id() - the GNU build id in a block of ELF notes, as hex
 * @n: the notes
 * @len: their size
 * @hex: result
 * @hexlen: its size
 *
 * Return: 0, or -1 when there is none.
 */
int dr_note_build_id(const unsigned char *n, size_t len, char *hex, size_t hexlen)
{
	uint32_t namesz, descsz, type;
	size_t off = 0, d, i;

	while (off + 12 <= len) {
		memcpy(&namesz, n + off, 4);
		memcpy(&descsz, n + off + 4, 4);
		memcpy(&type, n + off + 8, 4);
		d = off + 12 + ((namesz + 3ul) & ~3ul);
		if (d > len || descsz > len - d)
			return -1;
		if (type == NT_GNU_BUILD_ID && namesz == 4 && !memcmp(n + off + 12, "GNU", 4) &&
		    2 * descsz + 1 <= hexlen) {
			for (i = 0; i < descsz; i++)
				snprintf(hex + 2 * i, 3, "%02x", n[d + i]);
			return descsz ? 0 : -1;
		}
		off = d + ((descsz + 3ul) & ~3ul);
	}
	return -1;
}

/** dr_sys_build_id() - the build id of /sys/module/<m>/notes/.note.gnu.build-id */
int dr_sys_build_id(const char *path, char *hex, size_t hexlen)
{
	unsigned char n[512];
	char p[4096];
	ssize_t got;
	int fd;

	hex[0] = '\0';
	fd = open(dr_path(path, p, sizeof(p)), O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	got = read(fd, n, sizeof(n));
	close(fd);
	if (got < 0)
		return -EIO;
	return dr_note_build_id(n, got, hex, hexlen) ? -ENOENT : 0;
}

/* The build id in an ELF64 image's note sections. */
static int elf_build_id(const unsigned char *b, size_t len, char *hex, size_t hexlen)
{
	Elf64_Ehdr eh;
	Elf64_Shdr sh;
	size_t i;

	if (len < sizeof(eh) || memcmp(b, ELFMAG, SELFMAG) || b[EI_CLASS] != ELFCLASS64)
		return -1;
	memcpy(&eh, b, sizeof(eh));
	if (eh.e_shentsize != sizeof(sh) || eh.e_shoff > len ||
	    (size_t)eh.e_shnum * sizeof(sh) > len - eh.e_shoff)
		return -1;
	for (i = 0; i < eh.e_shnum; i++) {
		memcpy(&sh, b + eh.e_shoff + i * sizeof(sh), sizeof(sh));
		if (sh.sh_type != SHT_NOTE || sh.sh_offset > len || sh.sh_size > len - sh.sh_offset)
			continue;
		if (!dr_note_build_id(b + sh.sh_offset, sh.sh_size, hex, hexlen))
			return 0;
	}
	return -1;
}

/**
 * dr_file_build_id() - the GNU build id of a module file under the root
 * @path: the .ko, .ko.xz, .ko.zst or .ko.gz (decompressed with xz, zstd, gzip)
 * @hex: result
 * @hexlen: its size
 *
 * Return: 0, -ENOENT (no such file), -EACCES, or -EINVAL (no build id).
 */
int dr_file_build_id(const char *path, char *hex, size_t hexlen)
{
	static const char * const unz[][2] = {
		{ ".xz", "xz" }, { ".zst", "zstd" }, { ".gz", "gzip" },
	};
	const size_t max = 512ul << 20;
	char p[4096], *img = NULL;
	size_t len = 0, i, pl;
	struct stat st;
	int ret = -EINVAL, fd;

	hex[0] = '\0';
	dr_path(path, p, sizeof(p));
	if (access(p, R_OK))
		return -errno;
	pl = strlen(p);
	for (i = 0; i < sizeof(unz) / sizeof(unz[0]); i++) {
		size_t sl = strlen(unz[i][0]);

		if (pl > sl && !strcmp(p + pl - sl, unz[i][0])) {
			char *argv[] = { (char *)unz[i][1], "-dc", "--", p, NULL };

			if (dr_run_len(argv, &img, &len, max) || !img)
				goto out;
			break;
		}
	}
	if (!img) {
		fd = open(p, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		if (fstat(fd, &st) || (size_t)st.st_size > max || !(img = malloc(st.st_size + 1))) {
			close(fd);
			return -EINVAL;
		}
		while (len < (size_t)st.st_size) {
			ssize_t n = read(fd, img + len, st.st_size - len);

			if (n <= 0)
				break;
			len += n;
		}
		close(fd);
	}
	if (!elf_build_id((unsigned char *)img, len, hex, hexlen))
		ret = 0;
out:
	free(img);
	return ret;
}
