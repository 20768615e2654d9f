#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The kustomize base and overlays (deploy/base, deploy/overlays/*,
# docs/containers.md "Kustomize"), built with Debian's kustomize (trixie's:
# bookworm has none; scripts/setup installs it in the trixie root, and it
# runs there under bwrap) and read with gojq --yaml-input.  The base is
# deploy/base/gpreempt.yaml unchanged; each overlay changes what it says
# and nothing else: pinned every image to a digest, prebuilt
# GPREEMPT_MODULE=skip, shadow the module parameters to enable=0, clean
# GPREEMPT_ON_STOP=uninstall.
cd "$(dirname "$0")/../.." || exit 1
. test/lib/tap.sh
tap_plan 7
root=${GP_CACHE:-$PWD/.cache}/root-trixie
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT

if command -v kustomize >/dev/null; then
	kz() { kustomize build "deploy/$1"; }
elif [ -x "$root/usr/bin/kustomize" ] && command -v bwrap >/dev/null; then
	kz() {
		bwrap --ro-bind "$root" / --proc /proc --dev /dev --tmpfs /tmp \
			--ro-bind "$PWD/deploy" /tmp/deploy kustomize build "/tmp/deploy/$1"
	}
else
	tap_skip_rest "no kustomize (scripts/setup installs trixie's in $root; GP_SETUP_NRI=0 skips it)"
	tap_done
	exit
fi
command -v gojq >/dev/null || { tap_skip_rest "no gojq (scripts/setup installs it)"; tap_done; exit; }

# norm FILTER < YAML: the objects as one sorted JSON array, env lists sorted
# by name, after FILTER (which sets what an overlay may change to one value).
norm() {
	gojq --yaml-input -s "map(select(. != null) | $1
		| (.. | objects | select(has(\"env\")) | .env) |= sort_by(.name))
		| sort_by(.kind, .metadata.name)"
}
gojq --yaml-input -s 'map(select(. != null))' deploy/base/gpreempt.yaml >/dev/null ||
	tap_bail "deploy/base/gpreempt.yaml does not parse"

for o in base overlays/pinned overlays/prebuilt overlays/shadow overlays/clean overlays/init-build; do
	kz "$o" >"$t/${o##*/}.yaml" 2>"$t/${o##*/}.err" || : >"$t/${o##*/}.yaml"
done

ID='.'
tap_check "kustomize: the base is deploy/base/gpreempt.yaml unchanged" \
	cmp -s <(norm "$ID" <"$t/base.yaml") <(norm "$ID" <deploy/base/gpreempt.yaml)

IMG='(.. | objects | select(has("image")) | .image) |= "I"'
imgs=$(gojq --yaml-input -r 'select(.kind == "DaemonSet") | .spec.template.spec.containers[].image' \
	"$t/pinned.yaml" 2>/dev/null | sort -u)
tap_check "kustomize: pinned runs every container by digest, no tag ($imgs), and changes nothing else" \
	eval '[ -n "$imgs" ] && ! grep -qvE "^<your-registry>/gpreempt@sha256:[0-9a-f]{64}$" <<<"$imgs" &&
		cmp -s <(norm "$IMG" <"$t/pinned.yaml") <(norm "$IMG" <"$t/base.yaml")'

# envval FILE NAME: the node container's value of NAME.
envval() {
	gojq --yaml-input -r --arg n "$2" 'select(.kind == "DaemonSet") |
		.spec.template.spec.containers[] | select(.name == "gpreempt") |
		.env[] | select(.name == $n) | .value' "$1" 2>/dev/null
}
ENV='(.. | objects | select(.name? == "GPREEMPT_MODULE" or .name? == "GPREEMPT_ON_STOP") | .value) |= "V"'
tap_check "kustomize: prebuilt builds nothing on the node (GPREEMPT_MODULE=$(envval "$t/prebuilt.yaml" GPREEMPT_MODULE)), and changes nothing else" \
	eval '[ "$(envval "$t/prebuilt.yaml" GPREEMPT_MODULE)" = skip ] &&
		cmp -s <(norm "$ENV" <"$t/prebuilt.yaml") <(norm "$ENV" <"$t/base.yaml")'
tap_check "kustomize: clean uninstalls when the pod stops (GPREEMPT_ON_STOP=$(envval "$t/clean.yaml" GPREEMPT_ON_STOP)), and changes nothing else" \
	eval '[ "$(envval "$t/clean.yaml" GPREEMPT_ON_STOP)" = uninstall ] &&
		cmp -s <(norm "$ENV" <"$t/clean.yaml") <(norm "$ENV" <"$t/base.yaml")'

# init-build: the patch's own fields blanked; what is left must be the base.
INIT='(select(.kind == "DaemonSet") | .spec.template.spec) |= (del(.initContainers)
	| (.containers[] | select(.name == "gpreempt")) |= (.image = "I" | .resources.limits.memory = "M")
	| (.containers[] | select(.name == "metrics")) |= (.image = "I"))
	| (.. | objects | select(.name? == "GPREEMPT_MODULE") | .value) |= "V"'
init=$(gojq --yaml-input -r 'select(.kind == "DaemonSet") | .spec.template.spec |
	[(.initContainers[] | "\(.name) \(.image) \(.command | join(" ")) \(.securityContext.privileged)"),
	 (.containers[] | "\(.name) \(.image)"),
	 (.containers[] | select(.name == "gpreempt") | .env[] | select(.name == "GPREEMPT_MODULE") | .value)] | join(";")' \
	"$t/init-build.yaml" 2>/dev/null)
tap_check "kustomize: init-build builds in an init container of the full image, runs the runtime image with GPREEMPT_MODULE=init ($init), and changes nothing else" \
	eval '[ "$init" = "build <your-registry>/gpreempt:0.1 /usr/local/sbin/gpreempt-node build false;gpreempt <your-registry>/gpreempt-runtime:0.1;metrics <your-registry>/gpreempt-runtime:0.1;init" ] &&
		cmp -s <(norm "$INIT" <"$t/init-build.yaml") <(norm "$INIT" <"$t/base.yaml")'
PAR='(select(.kind == "ConfigMap") | .data["module-params"]) |= "P"'
params=$(gojq --yaml-input -r 'select(.kind == "ConfigMap") | .data["module-params"]' "$t/shadow.yaml" 2>/dev/null)
tap_check "kustomize: shadow loads gpreempt with enable=0 (module-params '$params'), and changes nothing else" \
	eval '[ "$params" = enable=0 ] &&
		cmp -s <(norm "$PAR" <"$t/shadow.yaml") <(norm "$PAR" <"$t/base.yaml")'
tap_check "kustomize: every overlay builds on the base ($(cat "$t"/*.err 2>/dev/null | head -c 300))" \
	eval '! [ -s "$t/pinned.err" ] && ! [ -s "$t/prebuilt.err" ] && ! [ -s "$t/shadow.err" ] &&
		! [ -s "$t/clean.err" ] && ! [ -s "$t/init-build.err" ] && ! [ -s "$t/base.err" ]'
tap_done
