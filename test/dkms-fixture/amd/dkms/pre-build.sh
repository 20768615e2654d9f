#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Fixture: amd/dkms/pre-build.sh KERNELVER TREE BUILDDIR CC, run from the top
# of the tree before kbuild: exported symbols get a prefix
# (include/rename_symbol.h), then the configure step writes
# amd/dkms/config/config.h for KERNELVER's kernel.
set -e
KERNELVER=$1
TREE=$2
BUILDDIR=$3
CC=${4:-gcc}

for f in amd/amdkcl/*.c; do
	sed -n 's/^EXPORT_SYMBOL(\(.*\));$/#define \1 gpfx_\1/p' "$f"
done | sort -u >>include/rename_symbol.h

export KERNELVER
ln -s "$TREE" "$BUILDDIR"
(cd amd/dkms && ./configure CC="$CC")
