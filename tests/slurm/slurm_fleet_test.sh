#!/usr/bin/env bash
# Integration test of the Slurm recipe (README): starts a private one-node Slurm cluster (munged, slurmctld,
# slurmd from Debian's packages) and runs `ceilings measure --all-gpus` / `ceilings fleet` through srun and sbatch
# on the CPU path: the real ceilings-bench without a GPU (exit 3 per task) and the stand-in bench (fake values).
# Usage: slurm_fleet_test.sh CEILINGS STANDIN_BENCH FIXTURES_DIR
# Exit 0 pass, 1 fail, 77 skip (Slurm or munge not installed, or neither root nor passwordless sudo). Every daemon it starts is stopped.
set -u

readonly SKIP=77
ceilings=${1:?usage: $0 CEILINGS STANDIN_BENCH FIXTURES_DIR}
standin=${2:?usage: $0 CEILINGS STANDIN_BENCH FIXTURES_DIR}
fixtures=${3:?usage: $0 CEILINGS STANDIN_BENCH FIXTURES_DIR}

skip() { echo "SKIP: $*"; exit "$SKIP"; }
for tool in munged munge unmunge slurmctld slurmd srun sbatch sinfo scontrol; do
  command -v "$tool" >/dev/null 2>&1 || skip "$tool not found (install slurmctld slurmd slurm-client munge)"
done
if [ "$(id -u)" -ne 0 ]; then  # a CI runner with passwordless sudo runs it as root; others skip
  if sudo -n true 2>/dev/null; then exec sudo -n -E bash "$0" "$@"; fi
  skip "starting munged and the Slurm daemons needs root (or passwordless sudo)"
fi
[ -r /etc/munge/munge.key ] || skip "/etc/munge/munge.key is missing"

work=$(mktemp -d /tmp/ceilings-slurm.XXXXXX)
chmod 755 "$work"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
pass() { echo "ok: $*"; }

stop_pidfile() {  # TERM, then KILL after 5 s, the process whose pid a daemon wrote
  local f=$1 pid
  [ -s "$f" ] || return 0
  pid=$(cat "$f")
  kill -TERM "$pid" 2>/dev/null || return 0
  for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null
}
cleanup() {
  local rc=$?
  trap '' INT TERM  # a second signal must not cut the cleanup short and leave daemons behind
  stop_pidfile "$work/slurmd.pid"
  stop_pidfile "$work/slurmctld.pid"
  stop_pidfile "$work/munged.pid"
  if [ "$failures" -ne 0 ] || [ "$rc" -ne 0 ]; then
    for log in slurmctld.log slurmd.log munged.log; do
      [ -f "$work/$log" ] && { echo "--- $log (last 30 lines)"; tail -n 30 "$work/$log"; }
    done
  fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
# If this script is killed outright (SIGKILL from a test timeout), a guard in its own session stops the daemons.
setsid bash -c "while kill -0 $$ 2>/dev/null; do sleep 1; done
  for d in slurmd slurmctld munged; do [ -s '$work/'\$d.pid ] && kill -KILL \$(cat '$work/'\$d.pid) 2>/dev/null; done
  rm -rf '$work'" </dev/null >/dev/null 2>&1 &

# A private munged (own socket, pid, log and seed files) so a munged already running is left alone.
timeout 20 munged --force --socket="$work/munge.sock" --pid-file="$work/munged.pid" --log-file="$work/munged.log" \
  --seed-file="$work/munged.seed" || { fail "munged did not start"; exit 1; }
timeout 10 bash -c "munge -S '$work/munge.sock' -n | unmunge -S '$work/munge.sock' >/dev/null" ||
  { fail "munge credentials do not round-trip"; exit 1; }

# Ports from this process id, so two runs on one machine do not collide.
host=$(hostname -s)
ctld_port=$((20000 + ($$ % 5000) * 2))
slurmd_port=$((ctld_port + 1))
mem_mb=$(awk '/MemTotal/ {print int($2 / 1024) - 1024}' /proc/meminfo)
cat >"$work/slurm.conf" <<EOF
ClusterName=ceilingstest
SlurmctldHost=$host
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$work/munge.sock
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
SchedulerType=sched/backfill
JobCompType=jobcomp/none
NodeName=$host CPUs=$(nproc) RealMemory=$mem_mb State=UNKNOWN
PartitionName=test Nodes=$host Default=YES OverSubscribe=YES MaxTime=10 State=UP
EOF
mkdir -p "$work/state" "$work/spool"
export SLURM_CONF="$work/slurm.conf"
timeout 30 slurmctld -f "$SLURM_CONF" || { fail "slurmctld did not start"; exit 1; }
timeout 30 slurmd -f "$SLURM_CONF" || { fail "slurmd did not start"; exit 1; }
idle=""
for _ in $(seq 60); do
  state=$(timeout 5 sinfo -h -n "$host" -o %T 2>/dev/null | head -n1)
  case "$state" in idle*|mixed*|allocated*) idle=$state; break ;; esac
  sleep 1
done
[ -n "$idle" ] || { fail "the node never became idle (state '${state:-none}')"; exit 1; }
pass "one-node cluster up ($host, $(nproc) CPUs)"

shared="$work/shared"
mkdir -p "$shared"
chmod 777 "$shared"

# 1. The recipe with srun, one task per "node" (here: three tasks on one node, one directory each since they
# share a hostname), on the real path without a GPU: every task exits 3 and writes no profile.
timeout 90 srun --ntasks=3 --overcommit --time=2 bash -c \
  "CUDA_VISIBLE_DEVICES= '$ceilings' measure --all-gpus --timeout 60 --out-dir '$shared/nogpu/task'\$SLURM_PROCID >/dev/null 2>'$shared/nogpu.err.'\$SLURM_PROCID; echo \$? > '$shared/nogpu.rc.'\$SLURM_PROCID"
for t in 0 1 2; do
  rc=$(cat "$shared/nogpu.rc.$t" 2>/dev/null || echo missing)
  if [ "$rc" = 3 ]; then pass "srun task $t: ceilings measure --all-gpus exits 3 without a GPU"
  else fail "srun task $t: exit '$rc', expected 3: $(cat "$shared/nogpu.err.$t" 2>/dev/null)"; fi
done
if ls "$shared"/nogpu/task*/*.profile.json >/dev/null 2>&1; then fail "a profile was written without a GPU"; fi

# 2. `ceilings fleet` over the stored hand-written healthy profiles (not the degraded copies), as a job step.
stored_files=("$fixtures"/profiles/*.profile.json)
out=$(timeout 60 srun --ntasks=1 --time=1 "$ceilings" fleet "${stored_files[@]}" 2>&1)
rc=$?
stored=${#stored_files[@]}
# Too few of each model to compare (groups of 1 or 2): nothing judged, exit 3.
if [ "$rc" = 3 ] && grep -q "read $stored profile(s)" <<<"$out"; then pass "srun ceilings fleet over the $stored stored profiles (not judged: exit 3)"
else fail "srun ceilings fleet: exit $rc: $out"; fi

# 3. The sbatch example: four tasks each measure a node of four stand-in GPUs (fake values), one GPU of
# task 2 is 20% slow; the batch step then runs ceilings fleet over the shared directory.
cat >"$work/fleet.sbatch" <<EOF
#!/bin/bash
#SBATCH --job-name=ceilings-fleet
#SBATCH --ntasks=4
#SBATCH --overcommit
#SBATCH --time=5
#SBATCH --output=$shared/job.out
run=$shared/run
srun bash -c 'export CEILINGS_STANDIN_NODE=\$SLURM_PROCID; if [ "\$SLURM_PROCID" = 2 ]; then export CEILINGS_STANDIN_SCALE_1=0.8; fi
  "$ceilings" measure --all-gpus --bench "$standin" --timeout 60 --out-dir "$shared/run/task\$SLURM_PROCID" \
    >"$shared/measure.out.\$SLURM_PROCID" 2>&1; echo \$? >"$shared/measure.rc.\$SLURM_PROCID"'
scontrol show hostnames "\$SLURM_JOB_NODELIST" >"$shared/hosts.txt"
"$ceilings" fleet "\$run" --format json --expect-hosts "$shared/hosts.txt" --write-baseline "$shared/baseline.json" \
  >"$shared/fleet.json" 2>"$shared/fleet.err"
echo \$? >"$shared/fleet.rc"
(cat "$shared/hosts.txt"; echo ghost-node) >"$shared/hosts-plus.txt"
"$ceilings" fleet "\$run" --format json --expect-hosts "$shared/hosts-plus.txt" >"$shared/fleet-plus.json" 2>/dev/null
exit 0  # sbatch --wait reports the script's exit: the fleet's are in the files above
EOF
env CEILINGS_STANDIN_DEVICES=4 timeout 150 sbatch --wait "$work/fleet.sbatch" >/dev/null 2>"$work/sbatch.err" ||
  fail "sbatch --wait: $(cat "$work/sbatch.err") $(cat "$shared/job.out" 2>/dev/null)"
for t in 0 1 2 3; do
  rc=$(cat "$shared/measure.rc.$t" 2>/dev/null || echo missing)
  want=0; [ "$t" = 2 ] && want=1  # task 2's GPU 1 is below its peers
  if [ "$rc" = "$want" ]; then pass "sbatch task $t: measure --all-gpus exit $rc"
  else fail "sbatch task $t: exit '$rc', expected $want: $(tail -n 5 "$shared/measure.out.$t" 2>/dev/null)"; fi
done
n=$(ls "$shared"/run/task*/*.profile.json 2>/dev/null | wc -l)
[ "$n" = 16 ] && pass "16 profiles collected in the shared directory" || fail "$n profiles collected, expected 16"
n=$(ls "$shared"/run/task*/*.node-summary.json 2>/dev/null | wc -l)
[ "$n" = 4 ] && pass "4 node summaries" || fail "$n node summaries, expected 4"
frc=$(cat "$shared/fleet.rc" 2>/dev/null || echo missing)
[ "$frc" = 1 ] && pass "ceilings fleet exits 1 (an outlier)" || fail "ceilings fleet exit '$frc': $(cat "$shared/fleet.err" 2>/dev/null)"
fj="$shared/fleet.json"
if grep -q "^  \"read\": 16,\?$" "$fj" && grep -q "^  \"outliers\": 1,\?$" "$fj" && grep -q "^  \"skipped\": \[\],\?$" "$fj" &&
   grep -q '"index": 1,' "$fj" && grep -q '"path": ".*/task2/.*-gpu1.profile.json"' "$fj" &&
   grep -q '"pci_bus_id": "00000000:01:00.0"' "$fj" && grep -q '"ceiling": "latency.launch"' "$fj"; then
  pass "fleet.json: 16 read, none skipped, one outlier: task 2's GPU 1"
else
  fail "fleet.json does not name task 2's GPU 1 alone: $(head -c 2000 "$fj" 2>/dev/null)"
fi
# The medians of the 15 GPUs the fleet found nothing against (task 2's GPU 1, the outlier, left out and listed).
grep -q '"profiles": 15' "$shared/baseline.json" 2>/dev/null && grep -q '"group_profiles": 16' "$shared/baseline.json" &&
  grep -q '"reason": "an outlier' "$shared/baseline.json" && pass "fleet baseline written, the outlier left out" ||
  fail "no fleet baseline of the 15 GPUs with no finding"
# The job's host list (scontrol show hostnames) names the host the profiles came from; a host that wrote nothing
# is named.
if tr -d ' \n' <"$fj" | grep -q '"hosts":{"expected":1,"list":"[^"]*hosts.txt","missing":\[\],"not_listed":\[\]}' &&
   tr -d ' \n' <"$shared/fleet-plus.json" | grep -q '"missing":\["ghost-node"\]'; then
  pass "fleet --expect-hosts: the job's host found; a listed host that wrote nothing named"
else
  fail "fleet --expect-hosts: $(tr -d ' \n' <"$fj" | grep -o '"hosts":{[^}]*}') / $(tr -d ' \n' <"$shared/fleet-plus.json" 2>/dev/null | grep -o '"hosts":{[^}]*}')"
fi

# 4. A job stopped from outside (its time limit, scancel): Slurm signals every process of the step at once, the bench
# among them, and the bench may die before measure acts on its own signal. The GPU that was measuring is
# interrupted (incomplete, exit 3), never a failed measurement a fleet would name as a health fault.
term="$shared/term"
env CEILINGS_STANDIN_DEVICES=2 CEILINGS_STANDIN_MODE_1=stall timeout 120 srun --ntasks=1 --time=2 \
  --job-name=ceilings-term "$ceilings" measure --all-gpus --bench "$standin" --timeout 60 --out-dir "$term" \
  >"$shared/term.out" 2>&1 &
srun_pid=$!
running=""
for _ in $(seq 300); do  # GPU 0 done, GPU 1 (stalled after its first case) running
  if grep -q '"state": "done"' "$term"/*.node-summary.json 2>/dev/null &&
     grep -q '"state": "running"' "$term"/*.node-summary.json 2>/dev/null; then running=yes; break; fi
  sleep 0.2
done
sleep 2  # its first case finished and checkpointed, the stall begun
jobid=$(timeout 10 squeue -h -n ceilings-term -o %i | head -n1)
if [ -z "$running" ] || [ -z "$jobid" ]; then
  fail "the stalled job step never ran (job '$jobid'): $(tail -n 5 "$shared/term.out")"
else
  timeout 10 scancel --signal=TERM "$jobid"
  wait "$srun_pid"
  rc=$?
  summary=$(cat "$term"/*.node-summary.json 2>/dev/null)
  gpu1=$(ls "$term"/*-gpu1.profile.json 2>/dev/null | head -n1)
  if [ "$rc" = 3 ] && grep -q '"interrupted_by": "SIGTERM"' <<<"$summary" && grep -q '"state": "interrupted"' <<<"$summary" &&
     [ -n "$gpu1" ] && ! grep -q 'killed by signal' "$gpu1" && grep -q 'interrupted: ' "$gpu1"; then
    pass "scancel --signal=TERM: the measuring GPU is interrupted, not failed (exit 3)"
  else
    fail "scancel --signal=TERM: exit $rc; summary: $(tr -d ' \n' <<<"$summary" | head -c 600); gpu1: $(grep -o '"reason": "[^"]*"' "$gpu1" 2>/dev/null | head -n 2)"
  fi
  if [ -n "$gpu1" ]; then
    "$ceilings" qualify "$gpu1" >/dev/null 2>&1
    q=$?
    [ "$q" = 3 ] && pass "qualify on the interrupted GPU: incomplete (exit 3)" || fail "qualify on the interrupted GPU: exit $q, expected 3"
  fi
fi

echo "$failures failure(s)"
[ "$failures" -eq 0 ]
