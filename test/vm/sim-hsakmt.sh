#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kfdsim's real KFD interface (issue 18, stages 1 and 2): Debian's
# libhsakmt (ROCm 5.2.3's thunk, unmodified) opens kfdsim's /dev/kfd, reads
# its sysfs topology, opens its render nodes, acquires the VMs, maps the
# MMIO page and reports the nodes kfdsim registered; then allocates system
# memory, VRAM and doorbells and creates, masks, updates and destroys an
# AQL queue through the same pqm/dqm code as /dev/kfdsim, with gpreempt
# seeing it; and Debian's ROCr (libhsa-runtime64-1) hsa_init() with polled
# signals finds the CPU and the GPUs.  The ioctls they issued are counted.
# kfd=0 registers nothing; an existing /dev/kfd (amdgpu's) makes kfdsim
# load without its own; render_minor= is retired (DRM chooses the minors).
# Runs inside the test guest from the repository root (test/run-vm sim);
# ends with kfdsim unloaded.
. test/lib/tap.sh
. test/lib/sim.sh
. test/lib/kfdclient.sh
HSAKMT=build/hsakmt-open
TOPO=/sys/devices/virtual/kfd/kfd/topology
NDEV=2
NCU=12
# 6 lines for each GPU node
tap_plan $((72 + 6 * NDEV))

kfdclient_begin hsakmt
kfdclient_need $HSAKMT fail "build/hsakmt-open built # libhsakmt-dev missing: run scripts/setup"


# --- registration ----------------------------------------------------------
tap_check "insmod kfdsim ndev=$NDEV num_cu=$NCU" insmod $KO ndev=$NDEV num_cu=$NCU
tap_check "kfdsim's KFD interface is on" grep -qx on $DBG/kfd
tap_check "/dev/kfd is a character device" test -c /dev/kfd
tap_check "the kfd class has the kfd device" test -e /sys/class/kfd/kfd/dev
tap_check "topology: 1 CPU + $NDEV GPU node directories" \
	test "$(ls $TOPO/nodes | tr '\n' ' ')" = "0 1 2 "
tap_check "topology: generation_id and system_properties" \
	grep -q '^platform_oem 0$' $TOPO/system_properties
tap_check "topology: node 0 is the CPU (gpu_id 0), GPU nodes have distinct gpu_ids" \
	test "$(cat $TOPO/nodes/0/gpu_id)" = 0 -a "$(cat $TOPO/nodes/1/gpu_id)" != 0 -a \
	"$(cat $TOPO/nodes/1/gpu_id)" != "$(cat $TOPO/nodes/2/gpu_id)"
tap_check "topology: GPU simd_count = num_cu x 4" \
	grep -qx "simd_count $((NCU * 4))" $TOPO/nodes/1/properties
tap_check "render nodes /dev/dri/renderD128 and renderD129" \
	test -c /dev/dri/renderD128 -a -c /dev/dri/renderD129

# --- Debian's libhsakmt on it ------------------------------------------------
tap_check "hsakmt-open: every libhsakmt call succeeds" $HSAKMT
$HSAKMT >$T/out 2>$T/err
grep -v 'marketing\|amdgpu_get_auth' $T/err | sed 's/^/# /' | head -5
tap_check "hsaKmtOpenKFD() = SUCCESS" has $T/out open 0
tap_check "hsaKmtGetVersion() = kfdsim's KFD version" \
	has $T/out version "$(awk '$1 == "version" {print $2}' $DBG/kfd)"
tap_check "hsaKmtAcquireSystemProperties(): 1 CPU + $NDEV GPU nodes" has $T/out nodes $((NDEV + 1))
tap_check "node 0: the CPU, $(nproc) cores, no SIMD" \
	eval 'has $T/out node0.cpu_cores $(nproc) && has $T/out node0.simd_count 0'
tap_check "node 0: an io link to each GPU node" \
	eval 'has $T/out node0.link0 "type 2 from 0 to 1" && has $T/out node0.link1 "type 2 from 0 to 2"'
for n in $(seq $NDEV); do
	tap_check "node $n: gfx 9.0.8 (Arcturus), vendor 0x1002, device 0x738c, no CPU core" \
		eval "has $T/out node$n.gfx 9.0.8 && has $T/out node$n.amd_name Arcturus &&
		      has $T/out node$n.vendor_id 0x1002 && has $T/out node$n.device_id 0x738c &&
		      has $T/out node$n.cpu_cores 0"
	# kfdsim's default for 12 CUs: 4 shader engines of one array, 3 CUs each.
	tap_check "node $n: $((NCU * 4)) SIMDs, 4 per CU, 4 arrays of $((NCU / 4)) CUs" \
		eval "has $T/out node$n.simd_count $((NCU * 4)) && has $T/out node$n.simd_per_cu 4 &&
		      has $T/out node$n.cu_per_array $((NCU / 4)) && has $T/out node$n.array_count 4"
	tap_check "node $n: wave64, 10 waves per SIMD, 64 KiB LDS, 24 CP queues, doorbell type 2" \
		eval "has $T/out node$n.wave_front_size 64 && has $T/out node$n.max_waves_per_simd 10 &&
		      has $T/out node$n.lds_kb 64 && has $T/out node$n.num_cp_queues 24 &&
		      has $T/out node$n.doorbell_type 2"
	tap_check "node $n: drm_render_minor $((127 + n))" has $T/out node$n.drm_render_minor $((127 + n))
	tap_check "node $n: 1 GiB VRAM bank, 2 caches, a link to the CPU" \
		eval "has $T/out node$n.mem0 'heap 1 size 1073741824' && has $T/out node$n.caches 2 &&
		      has $T/out node$n.link0 'type 2 from $n to 0'"
	# 1 sysfs bank + LDS, scratch, SVM + the MMIO page: libhsakmt only adds
	# the last if ALLOC_MEMORY_OF_GPU(MMIO_REMAP), the mmap of /dev/kfd and
	# MAP_MEMORY_TO_GPU all succeeded.
	tap_check "node $n: the remapped MMIO page is mapped (mem_banks 5, heap 7)" \
		eval "has $T/out node$n.mem_banks 5 && has $T/out node$n.mem4 'heap 7 size 4096'"
done
tap_check "hsaKmtCloseKFD() = SUCCESS" has $T/out close 0
tap_check "the KFD process is gone after the client exits" wait_for 5 ks_idle

# Per run of hsakmt-open (two runs so far): hsaKmtOpenKFD + node enumeration + close.
tap_diag "KFD ioctls of 2 hsakmt-open runs: $(tr '\n' ' ' <$DBG/kfd_ioctls)"
tap_check "ioctls per open: GET_VERSION 1, GET_PROCESS_APERTURES_NEW 1" \
	test "$(calls GET_VERSION)" = 2 -a "$(calls GET_PROCESS_APERTURES_NEW)" = 2
tap_check "ioctls per open: ACQUIRE_VM and SET_MEMORY_POLICY once per GPU" \
	test "$(calls ACQUIRE_VM)" = $((2 * NDEV)) -a "$(calls SET_MEMORY_POLICY)" = $((2 * NDEV))
tap_check "ioctls per open: ALLOC, MAP, UNMAP, FREE of the MMIO page once per GPU" \
	test "$(calls ALLOC_MEMORY_OF_GPU)" = $((2 * NDEV)) -a "$(calls MAP_MEMORY_TO_GPU)" = $((2 * NDEV)) -a \
	"$(calls UNMAP_MEMORY_FROM_GPU)" = $((2 * NDEV)) -a "$(calls FREE_MEMORY_OF_GPU)" = $((2 * NDEV))
tap_check "no other ioctl" test "$(wc -l <$DBG/kfd_ioctls)" = 8

# --- the ioctls' own checks, from a client of ours ---------------------------
cat >$T/ioc.py <<'EOF'
import errno, fcntl, os, struct, sys
def ioc(d, nr, size):
    return (d << 30) | (size << 16) | (ord('K') << 8) | nr
GET_VERSION, ACQUIRE_VM = ioc(2, 0x01, 8), ioc(1, 0x15, 8)
GET_TILE_CONFIG = ioc(3, 0x12, 40)
gpu0, gpu1 = (int(open('/sys/devices/virtual/kfd/kfd/topology/nodes/%d/gpu_id' % n).read())
              for n in (1, 2))
kfd = os.open('/dev/kfd', os.O_RDWR)
r0 = os.open('/dev/dri/renderD128', os.O_RDWR)
r1 = os.open('/dev/dri/renderD129', os.O_RDWR)
null = os.open('/dev/null', os.O_RDWR)
def call(cmd, buf):
    try:
        fcntl.ioctl(kfd, cmd, buf)
        return 0
    except OSError as e:
        return e.errno
buf = bytearray(8)
print('get_version', call(GET_VERSION, buf), '%d.%d' % struct.unpack('II', buf))
print('acquire_null', call(ACQUIRE_VM, struct.pack('II', null, gpu0)))
print('acquire_other_render', call(ACQUIRE_VM, struct.pack('II', r1, gpu0)))
print('acquire_bad_gpu', call(ACQUIRE_VM, struct.pack('II', r0, 1)))
print('acquire', call(ACQUIRE_VM, struct.pack('II', r0, gpu0)))
print('acquire_again', call(ACQUIRE_VM, struct.pack('II', r0, gpu0)))
r0b = os.open('/dev/dri/renderD128', os.O_RDWR)
print('acquire_second_file', call(ACQUIRE_VM, struct.pack('II', r0b, gpu0)))
print('get_tile_config', call(GET_TILE_CONFIG, bytearray(40)))
# Counts far above the 32 tile and 16 macro-tile configurations, into
# arrays of exactly that many entries and a canary after each: the counts
# are cut, and nothing is written past the arrays.
import ctypes
tiles = (ctypes.c_uint32 * 33)(*([0xa5a5a5a5] * 33))
macro = (ctypes.c_uint32 * 17)(*([0xa5a5a5a5] * 17))
args = bytearray(struct.pack('QQIIIIII', ctypes.addressof(tiles), ctypes.addressof(macro),
                             1000, 1000, gpu0, 0, 0, 0))
rc = call(GET_TILE_CONFIG, args)
_, _, nt, nm, _, gb, _, _ = struct.unpack('QQIIIIII', args)
print('tile_config_cut', rc, nt, nm, 'written' if tiles[0] == 0 and macro[0] == 0 else 'unwritten',
      'canary' if tiles[32] == 0xa5a5a5a5 and macro[16] == 0xa5a5a5a5 else 'overrun')
print('unknown', call(ioc(3, 0xf0, 8), bytearray(8)))
EOF
python3 $T/ioc.py >$T/ioc 2>&1
sed 's/^/# /' $T/ioc | grep -v '^# [a-z_]* [0-9]' | head -5
tap_check "GET_VERSION from our own client" \
	has $T/ioc get_version "0 $(awk '$1 == "version" {print $2}' $DBG/kfd)"
tap_check "ACQUIRE_VM refuses a file that is no render node (EINVAL)" has $T/ioc acquire_null 22
tap_check "ACQUIRE_VM refuses another device's render node (EINVAL)" has $T/ioc acquire_other_render 22
tap_check "ACQUIRE_VM refuses an unknown gpu_id (EINVAL)" has $T/ioc acquire_bad_gpu 22
tap_check "ACQUIRE_VM takes the device's render node, again with the same file" \
	eval 'has $T/ioc acquire 0 && has $T/ioc acquire_again 0'
tap_check "ACQUIRE_VM refuses a second render file for the same VM (EBUSY)" \
	has $T/ioc acquire_second_file 16
tap_check "GET_TILE_CONFIG refuses gpu_id 0 (EINVAL); both calls are counted" \
	eval 'has $T/ioc get_tile_config 22 && test "$(calls GET_TILE_CONFIG)" = 2'
tap_check "GET_TILE_CONFIG cuts counts of 1000 to 32 and 16 and writes nothing past the arrays" \
	has $T/ioc tile_config_cut "0 32 16 written canary"
tap_check "an ioctl KFD does not have fails (ENOTTY) and is counted" \
	eval 'has $T/ioc unknown 25 && test "$(calls 0xf0)" = 1'

# --- a queue through libhsakmt, with gpreempt loaded (stage 2) ---------------
tap_check "wait for kfdsim to be idle" wait_for 5 ks_idle
snapshot
tap_check "insmod gpreempt" insmod $OBJ/module/gpreempt.ko user_max_priority=15
$HSAKMT queue $T/release >$T/q 2>/dev/null &
qpid=$!
tap_check "hsaKmtCreateQueue() + SetQueueCUMask() + UpdateQueue() done" \
	wait_for 15 grep -qx queue_ready $T/q
qline=$(grep ' dev=0 ' $DBG/queues)
tap_diag "kfdsim: $qline"
one_queue() {
	[ "$(grep -c '^queue ' $DBG/queues)" = 1 ] && [ "$(kstat queues)" = 1 ] &&
		[[ "$qline" == *" active=1 "*" mapped=1 "*" type=compute "* ]] ||
		{ cat $DBG/queues; grep '^queues' $DBG/stats; return 1; }
}
tap_check "kfdsim has the queue on device 0, mapped, AQL compute" one_queue
tap_check "UPDATE_QUEUE: priority HIGH is KFD priority 11 (libhsakmt's priority_map)" \
	eval '[[ "$qline" == *" prio=11 "* ]]'
tap_check "SET_CU_MASK: the queue's mask has 4 CUs" eval '[[ "$qline" == *" cu_mask_cus=4 "* ]]'
tap_check "the CP ran both AQL packets: rptr (read_dispatch_id) 2, packets 2" \
	eval '[[ "$qline" == *" rptr=2 wptr=2 "*" packets=2 "* ]]'
tap_check "AQL dispatch: grid / workgroup size = 2 x $NCU workgroups, all completed" \
	eval 'has $T/q dispatch_wgs $((2 * NCU)) && test "$(kstat workgroups_completed)" = $((2 * NCU))'
tap_check "AQL dispatch: its completion signal decremented to 0" has $T/q dispatch_signal 0
tap_check "AQL dispatch: no sooner than 2 rounds of the kernarg's 1 ms ($(field $T/q dispatch_us) us)" \
	test "$(field $T/q dispatch_us)" -ge 2000
tap_check "AQL barrier-AND waits while its dependency signal is 1 (read_dispatch_id 1)" \
	has $T/q barrier_blocked 1
tap_check "AQL barrier-AND completes once it is 0 (read_dispatch_id 2, signal 0)" \
	has $T/q barrier_done "2 0"
tap_diag "gpreempt (client pid $qpid): $($CTL --json status 2>&1 | jq -c '.queues[] | {tgid, qid, kfd_priority, priority, state, ptr_path}')"
tap_check "gpreempt's hook saw the queue libhsakmt created (kfd_procfs_add_queue: queues_seen 1)" \
	test "$(gstat queues_seen)" = 1
# (wait_for: a status read can miss a queue while the monitor republishes them)
tap_check "gpreempt tracks it: its qid and KFD priority 11 (UPDATE_QUEUE seen)" \
	wait_for 5 eval 'test "$(qf $qpid qid)" = 0 && test "$(qf $qpid kfd_priority)" = 11'
touch $T/release
wait $qpid
tap_check "hsakmt-open queue: every libhsakmt call succeeds" test $? -eq 0
grep -v '^node' $T/q | tr '\n' ' ' | sed 's/^/# /'; echo
tap_check "VRAM buffer: written and read back through its render-node mapping" has $T/q vram_rw ok
tap_check "the doorbell page is mapped through /dev/kfd and writable" has $T/q doorbell ok
tap_check "hsaKmtSetQueueCUMask, hsaKmtUpdateQueue, hsaKmtDestroyQueue = SUCCESS" \
	eval 'has $T/q cu_mask 0 && has $T/q update 0 && has $T/q destroy 0'
tap_check "the queue is gone from kfdsim and gpreempt" \
	eval 'wait_for 5 ks_idle && wait_for 2 eval "[ \"\$(gstat queues)\" = 0 ]"'
tap_diag "KFD ioctls of 1 hsakmt-open queue run: $(for c in $(awk '{print $1}' $DBG/kfd_ioctls); do printf '%s %s ' $c $(delta $c); done)"
tap_check "one CREATE_QUEUE, SET_CU_MASK, UPDATE_QUEUE, DESTROY_QUEUE" \
	eval 'test "$(delta CREATE_QUEUE)$(delta SET_CU_MASK)$(delta UPDATE_QUEUE)$(delta DESTROY_QUEUE)" = 1111'
# MMIO page per GPU; ring, dispatch ids, VRAM buffer; libhsakmt's queue
# struct, EOP buffer (VRAM), CWSR area and doorbells
tap_check "ALLOC_MEMORY_OF_GPU $((NDEV + 7)) times, each one freed, mapped and unmapped" \
	eval 'test "$(delta ALLOC_MEMORY_OF_GPU) $(delta FREE_MEMORY_OF_GPU) $(delta MAP_MEMORY_TO_GPU) $(delta UNMAP_MEMORY_FROM_GPU)" = "$((NDEV + 7)) $((NDEV + 7)) $((NDEV + 7)) $((NDEV + 7))"'
tap_check "rmmod gpreempt" rmmod gpreempt


# --- Debian's ROCr (libhsa-runtime64-1) hsa_init, polling signals ----------
cat >$T/hsa.py <<'PY'
import ctypes
lib = ctypes.CDLL("libhsa-runtime64.so.1")
print("hsa_init %d" % lib.hsa_init())
CB = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_uint64, ctypes.c_void_p)
def agent(a, data):
    name, dev = ctypes.create_string_buffer(64), ctypes.c_uint32()
    lib.hsa_agent_get_info(ctypes.c_uint64(a), 0, name)               # HSA_AGENT_INFO_NAME
    lib.hsa_agent_get_info(ctypes.c_uint64(a), 17, ctypes.byref(dev))  # HSA_AGENT_INFO_DEVICE
    print("agent %d %s" % (dev.value, name.value.decode()))
    return 0
cb = CB(agent)
print("iterate %d" % lib.hsa_iterate_agents(cb, None))
print("shut_down %d" % lib.hsa_shut_down())
PY
snapshot
HSA_ENABLE_INTERRUPT=0 timeout 120 python3 $T/hsa.py >$T/hsa 2>&1
grep -v 'amdgpu_get_auth\|^[a-z_]* ' $T/hsa | head -5 | sed 's/^/# /'
tap_check "ROCr hsa_init() = HSA_STATUS_SUCCESS (HSA_ENABLE_INTERRUPT=0)" has $T/hsa hsa_init 0
tap_check "ROCr's agents: the CPU and one gfx908 GPU per kfdsim device" \
	eval 'test "$(grep -c "^agent 0 " $T/hsa) $(grep -c "^agent 1 gfx908$" $T/hsa)" = "1 $NDEV"'
tap_check "ROCr hsa_shut_down() = HSA_STATUS_SUCCESS" has $T/hsa shut_down 0
tap_diag "KFD ioctls of ROCr's hsa_init + hsa_shut_down: $(for c in $(awk '{print $1}' $DBG/kfd_ioctls); do d=$(delta $c); [ "$d" != 0 ] && printf '%s %s ' $c $d; done)"
tap_check "the ROCr process is gone" wait_for 5 ks_idle

tap_check "rmmod kfdsim" eval 'wait_for 5 ks_idle && rmmod kfdsim'
tap_check "/dev/kfd, the class and the render nodes are gone" \
	eval '! test -e /dev/kfd && ! test -e /sys/class/kfd && ! test -e /dev/dri/renderD128'

# --- kfd=0 -------------------------------------------------------------------
tap_check "insmod kfdsim kfd=0" insmod $KO kfd=0
tap_check "kfd=0: no /dev/kfd, no kfd class, no render node" \
	eval '! test -e /dev/kfd && ! test -e /sys/class/kfd && ! test -e /dev/dri/renderD128'
tap_check "kfd=0: debugfs says off" grep -qx off $DBG/kfd
tap_check "kfd=0: /dev/kfdsim stays" test -c /dev/kfdsim
$HSAKMT >$T/out0 2>&1
tap_check "kfd=0: hsaKmtOpenKFD() = KERNEL_IO_CHANNEL_NOT_OPENED (20)" has $T/out0 open 20
tap_check "rmmod kfdsim" rmmod kfdsim

# --- never next to another KFD ---------------------------------------------
refused() {	# refused WHAT: kfdsim loaded without its KFD, and said why once
	grep -qx refused $DBG/kfd || { echo "state $(head -1 $DBG/kfd)"; return 1; }
	[ "$(dmesg | grep -c "kfdsim: $1 exists (amdgpu loaded?): kfdsim registers no /dev/kfd")" = 1 ] ||
		{ dmesg | tail -3; return 1; }
	! test -e /sys/class/kfd || { echo "kfd class registered"; return 1; }
	! ls /sys/class/drm 2>/dev/null | grep -q '^renderD' || { echo "a DRM device registered"; return 1; }
}
dmesg -C
mknod /dev/kfd c 1 3	# a stand-in for amdgpu's /dev/kfd
tap_check "insmod kfdsim with a /dev/kfd present loads" insmod $KO
tap_check "... and registers no KFD: one log line, no kfd class" refused /dev/kfd
tap_check "... and leaves the other /dev/kfd alone (major 1)" \
	test "$(stat -c %t /dev/kfd)" = 1
gp_nesting() {
	local out
	out=$(build/gpload test nesting) || return 1
	! printf '%s\n' "$out" | grep -q '^not ok'
}
tap_check "... /dev/kfdsim still works (gpload test nesting)" gp_nesting
rm -f /dev/kfd
tap_check "rmmod kfdsim" eval 'wait_for 5 ks_idle && rmmod kfdsim'

# --- render_minor= (retired) ---------------------------------------------------
dmesg -C
tap_check_fails "insmod render_minor=200 refused: DRM chooses render minors" insmod $KO render_minor=200
tap_check "... with one line saying the parameter is retired" \
	test "$(dmesg | grep -c 'kfdsim: render_minor=200 is retired: DRM chooses the render minors')" = 1

tap_dmesg_clean "no kernel warnings"
rm -rf "$T"
tap_done
