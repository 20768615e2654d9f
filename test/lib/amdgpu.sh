# SPDX-License-Identifier: GPL-2.0
# test/lib/amdgpu.sh - the real amdgpu in the test guest (sourced).

# amdgpu_modules KVER: fill /lib/modules/KVER (a tmpfs the caller mounted)
# with links to amdgpu and what it needs from the cached kernel
# ($GP_KROOT), its modules.builtin and modules.order, then depmod: depmod
# of all its 4000 modules takes minutes in a TCG guest.
amdgpu_modules() {
	local kver=$1 mods=$GP_KROOT/lib/modules/$1 m
	mkdir -p "/lib/modules/$kver" || return 1
	modprobe -d "$GP_KROOT" -S "$kver" --show-depends amdgpu | awk '$1 == "insmod" { print $2 }' |
		while read -r m; do
			mkdir -p "$(dirname "/lib/modules/$kver/${m#"$mods"/}")"
			ln -s "$m" "/lib/modules/$kver/${m#"$mods"/}"
		done
	cp "$mods"/modules.builtin* "$mods"/modules.order "/lib/modules/$kver/" &&
		depmod -a "$kver"
}
