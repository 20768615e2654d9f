# SPDX-License-Identifier: GPL-2.0
# test/lib/llama.sh - llama.cpp from the forky root on kfdsim, for
# test/vm/long-llama.sh and scripts/bench-guest llama (sourced after
# test/lib/sim.sh).  Sets R (the root), LLAMA_TESTS, LLAMA_PORT,
# LLAMA_COSTS.
R=$(readlink -f "${GP_FORKY_ROOT:-.cache/root-forky}")
LLAMA_TESTS=/usr/libexec/x86_64-linux-gnu/llama.cpp-tests
LLAMA_PORT=${LLAMA_PORT:-18080}
LLAMA_COSTS=test/kfdsim/costs-ggml-mi100

# forky CGROUP COMMAND...: COMMAND in CGROUP, chrooted into the root, in a
# mount namespace of its own with the guest's /dev, /proc, /sys and /tmp
# (test/vm/sim-forky.sh's in_forky), with HIP graphs off and every code
# object copied by the CPU (so that its bytes are in VRAM, where kfdsim
# names the kernels from).  Every step execs, this function too: run it in
# the background (its $! is COMMAND's pid) or in a subshell.
forky() {
	local cg=$1
	shift
	exec sh -c 'echo $$ >"$1/cgroup.procs" && R=$2 && shift 2 &&
		exec unshare -m --propagation private sh -c '\''R=$1; shift
		mount --rbind /dev "$R/dev" && mount --rbind /proc "$R/proc" &&
		mount --rbind /sys "$R/sys" && mount --bind /tmp "$R/tmp" &&
		exec chroot "$R" env HOME=/tmp GGML_CUDA_DISABLE_GRAPHS=1 \
			HSA_CO_DMACOPY_SIZE=1000000000 "$@"'\'' sh "$R" "$@"' sh "$cg" "$R" "$@"
}

# llama_model DIR: the random-weight llama model, DIR/llama-dense.gguf, and
# training text, DIR/train.txt (the model's vocabulary is bytes: any text).
llama_model() {
	(forky /sys/fs/cgroup $LLAMA_TESTS/test-llama-archs -a '^llama$' -o "$1") >"$1/archs" 2>&1
	python3 -c "import random; r = random.Random(1); w = 'gpu queue park kernel token step loss batch'.split()
print(' '.join(r.choice(w) for _ in range(20000)))" >"$1/train.txt"
}

# llama_costs SCALE: kfdsim's cost table from LLAMA_COSTS, each a and b
# times SCALE, rounded (the file's comment says why).
llama_costs() {
	awk -v s="$1" '/^[^#]/ && NF == 4 { printf "%s %d %d %d\n", $1, $2 * s + 0.5, $3 * s + 0.5, $4 }' \
		$LLAMA_COSTS >/sys/kernel/debug/kfdsim/costs
}

# llama_server CGROUP DIR LOG: llama-server on DIR's model, every layer on
# the GPU, one slot, greedy; its pid in srv.
llama_server() {
	forky "$1" llama-server -m "$2/llama-dense.gguf" -ngl 99 --host 127.0.0.1 \
		--port $LLAMA_PORT -c 256 -np 1 -t 2 --temp 0 >"$3" 2>&1 &
	srv=$!
}
# llama_up: the server answers /health.
llama_up() {
	python3 -c "import urllib.request as u; u.urlopen('http://127.0.0.1:$LLAMA_PORT/health', timeout=5)" 2>/dev/null
}
# llama_finetune CGROUP DIR LOG: llama-finetune on DIR's model and text,
# every layer on the GPU, for as long as it is let; its pid in ft.
llama_finetune() {
	forky "$1" llama-finetune -m "$2/llama-dense.gguf" -f "$2/train.txt" -ngl 99 -c 64 -b 64 \
		-ub 64 -epochs 1000 -t 2 -o /tmp/ft-out.gguf >"$3" 2>&1 &
	ft=$!
}
# llama_steps LOG: llama-finetune's training steps so far (a progress line each).
llama_steps() { grep -o 'train: \[' "$1" | wc -l; }
# llama_load OUT N GAP NPREDICT: N Poisson requests (test/lib/llama-load.py),
# the summary in OUT, each request in OUT.jsonl.
llama_load() {
	python3 test/lib/llama-load.py --port $LLAMA_PORT --requests "$2" --gap "$3" \
		--n-predict "$4" --seed 42 --out "$1.jsonl" >"$1" 2>"$1.err"
}
