// SPDX-License-Identifier: GPL-2.0
/*
 * fuse-stall - a FUSE file system with one file that never answers a read.
 *
 *   fuse-stall [--user UID] MOUNTPOINT
 *
 * Mounts itself on MOUNTPOINT (needs root for mount(2): the guest has no
 * fusermount), then drops to UID (default 65534) and serves the file "f",
 * 4096 bytes, mode 0666, straight from /dev/fuse.  A FUSE_READ is never
 * answered: whoever faults the file's page in waits for as long as this
 * process lives.  Killing it (SIGTERM) aborts the connection, so the waiters
 * get an error and go on.  Prints "ready" once mounted, "read stalled" at
 * the first read it holds back.  The attack of REVIEW-S3 F6, on a machine
 * where unprivileged FUSE mounts are allowed.
 *
 * Exit status: 0 when the kernel ends the session, 1 on errors, 2 on usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/fuse.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#define FILE_INO 2
#define FILE_SIZE 4096
#define VALID_S 3600

static int fuse_fd = -1;

static int reply(uint64_t unique, int error, const void *arg, size_t len)
{
	struct fuse_out_header oh = { .len = sizeof(oh) + len, .error = error,
				      .unique = unique };
	char buf[sizeof(oh) + 512];

	if (len > sizeof(buf) - sizeof(oh))
		return -1;
	memcpy(buf, &oh, sizeof(oh));
	if (len)
		memcpy(buf + sizeof(oh), arg, len);
	if (write(fuse_fd, buf, oh.len) != (ssize_t)oh.len && errno != ENOENT) {
		/* ENOENT: the request was interrupted meanwhile. */
		perror("fuse-stall: write /dev/fuse");
		return -1;
	}
	return 0;
}

static void fill_attr(struct fuse_attr *a, uint64_t ino)
{
	memset(a, 0, sizeof(*a));
	a->ino = ino;
	a->nlink = ino == FUSE_ROOT_ID ? 2 : 1;
	a->mode = ino == FUSE_ROOT_ID ? S_IFDIR | 0755 : S_IFREG | 0666;
	a->size = ino == FUSE_ROOT_ID ? 0 : FILE_SIZE;
	a->blocks = a->size / 512;
	a->blksize = 4096;
	a->uid = getuid();
	a->gid = getgid();
}

static int serve(void)
{
	static char buf[FUSE_MIN_READ_BUFFER + 65536];
	bool stalled = false;

	for (;;) {
		struct fuse_in_header *ih = (struct fuse_in_header *)buf;
		void *arg = buf + sizeof(*ih);
		ssize_t n = read(fuse_fd, buf, sizeof(buf));

		if (n < 0) {
			if (errno == EINTR || errno == ENOENT || errno == EAGAIN)
				continue;
			if (errno == ENODEV)	/* unmounted */
				return 0;
			perror("fuse-stall: read /dev/fuse");
			return 1;
		}
		if ((size_t)n < sizeof(*ih))
			continue;
		switch (ih->opcode) {
		case FUSE_INIT: {
			const struct fuse_init_in *in = arg;
			struct fuse_init_out out = { .major = FUSE_KERNEL_VERSION,
						     .minor = FUSE_KERNEL_MINOR_VERSION,
						     .max_readahead = in->max_readahead,
						     .max_write = 4096 };

			reply(ih->unique, 0, &out, sizeof(out));
			break;
		}
		case FUSE_GETATTR: {
			struct fuse_attr_out out = { .attr_valid = VALID_S };

			fill_attr(&out.attr, ih->nodeid);
			reply(ih->unique, 0, &out, sizeof(out));
			break;
		}
		case FUSE_LOOKUP: {
			struct fuse_entry_out out = { .nodeid = FILE_INO, .generation = 1,
						      .entry_valid = VALID_S,
						      .attr_valid = VALID_S };

			if (ih->nodeid != FUSE_ROOT_ID || strcmp(arg, "f")) {
				reply(ih->unique, -ENOENT, NULL, 0);
				break;
			}
			fill_attr(&out.attr, FILE_INO);
			reply(ih->unique, 0, &out, sizeof(out));
			break;
		}
		case FUSE_OPEN:
		case FUSE_OPENDIR: {
			struct fuse_open_out out = { .fh = 1 };

			reply(ih->unique, 0, &out, sizeof(out));
			break;
		}
		case FUSE_SETATTR: {
			struct fuse_attr_out out = { .attr_valid = VALID_S };

			fill_attr(&out.attr, ih->nodeid);
			reply(ih->unique, 0, &out, sizeof(out));
			break;
		}
		case FUSE_READ:
			/* The point: never answered. */
			if (!stalled) {
				printf("read stalled\n");
				fflush(stdout);
				stalled = true;
			}
			break;
		case FUSE_FLUSH:
		case FUSE_RELEASE:
		case FUSE_RELEASEDIR:
		case FUSE_ACCESS:
		case FUSE_FSYNC:
			reply(ih->unique, 0, NULL, 0);
			break;
		case FUSE_FORGET:
		case FUSE_BATCH_FORGET:
		case FUSE_INTERRUPT:
			break;	/* no reply expected (an interrupted read stays unanswered) */
		case FUSE_DESTROY:
			return 0;
		default:
			reply(ih->unique, -ENOSYS, NULL, 0);
			break;
		}
	}
}

static void usage(void)
{
	fprintf(stderr, "usage: fuse-stall [--user UID] MOUNTPOINT\n");
}

int main(int argc, char **argv)
{
	unsigned long uid = 65534;
	char opts[128], *end;
	const char *mnt;

	if (argc == 4 && !strcmp(argv[1], "--user")) {
		errno = 0;
		uid = strtoul(argv[2], &end, 10);
		if (errno || *end || uid > 0xfffffffe) {
			fprintf(stderr, "fuse-stall: --user: a numeric uid, not '%s'\n", argv[2]);
			return 2;
		}
		mnt = argv[3];
	} else if (argc == 2 && argv[1][0] != '-') {
		mnt = argv[1];
	} else {
		usage();
		return 2;
	}
	fuse_fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	if (fuse_fd < 0) {
		perror("fuse-stall: /dev/fuse (is the fuse module loaded?)");
		return 1;
	}
	snprintf(opts, sizeof(opts), "fd=%d,rootmode=40000,user_id=%lu,group_id=%lu,allow_other",
		 fuse_fd, uid, uid);
	if (mount("fuse-stall", mnt, "fuse", MS_NOSUID | MS_NODEV, opts)) {
		fprintf(stderr, "fuse-stall: mount %s: %s\n", mnt, strerror(errno));
		return 1;
	}
	if (setgroups(0, NULL) || setgid(uid) || setuid(uid)) {
		perror("fuse-stall: drop privileges");
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	return serve();
}
