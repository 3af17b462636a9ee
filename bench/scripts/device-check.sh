#!/usr/bin/env bash
# One call on the GPU machine: configure, build, `ceilings measure` within a deadline, then the tests (GPU
# ones first), and judge the profile against the defaults and the H200 targets. Everything lands
# under $OUT in at most 8 files (what the device tool returns): env.txt, build.log, tests.log,
# measure.log, qualify.txt (with every ceiling in full after the verdicts), h200.profile.json,
# h200.bench.json, and gemm-ab.jsonl with --gemm-ab or sanitize.log with --sanitize (--time-quick's output
# goes to measure.log). The tail of stdout is a short summary. env.txt and the profiles name the commit
# prepare-device-deps.sh recorded, where this tree is still the one it recorded (else "unknown").
#
# Prepare here first: bash bench/scripts/prepare-device-deps.sh (carry .device-deps).
# Usage (on the device): OUT=$OUT bash bench/scripts/device-check.sh [--deadline S] [--family-s S] [--tests-s S] [--no-tests]
#                        [--quick] [--filter REGEX] [-- more `ceilings measure` arguments]
#   --deadline S   seconds from the start of this script by which everything must be done (default 540):
#                  `ceilings measure` runs first and gets what is left, less 20 s and the time kept for
#                  the tests, as its --timeout; a run cut there keeps every case it finished (the profile
#                  says it is incomplete)
#   --family-s S   `ceilings measure --family-timeout`: no family before the last may run longer (default 120,
#                  several times what a healthy one should need, by estimate), so one that hangs cannot starve GEMM (0: no cap)
#   --tests-s S    seconds kept for the tests after the measurement (default 130: the GPU tests are estimated at 60-160 s
#                  on an H200, not yet timed there, the CPU ones the rest; as much again for
#                  --sanitize): the GPU tests first, then the CPU ones, with what is left but what
#                  --time-quick, --gemm-ab and --sanitize keep
#   --no-tests     skip ctest (the measurement gets their time)
#   --gpu-tests-only  build only ceilings, ceilings-bench and the GPU tests, and run only those tests (the CPU
#                  ones pass here too; on a short lease the build and their run cost the measurement a minute)
#   --time-quick   last, with 60 s kept for it (it took 36 s on the H200): times `ceilings measure --quick` (the
#                  issues ask for a quick pass of about 30 s of GEMM); its log and family times go after the
#                  measurement's in measure.log
#   --gemm-ab      last, with 90 s kept for it: the open GEMM timing question, one ceilings-bench process per
#                  setting, each given its share of what is left; a table of all goes to stdout and measure.log
#                  (rate, the search's back-to-back rate, the side-by-side rates, cv, samples, clock, power,
#                  shape, algorithm; the side-by-side rounds' slowest and fastest, each burst sample's rate,
#                  clock and reasons), each setting's raw JSON to gemm-ab.jsonl. Now: gemm.fp64 (no sustained
#                  windows) at the shorter 2816x3072x4096, at its H200 pick 4096x4224x8192 without the burst's
#                  warm-up time and without warm-up time and pre-roll, and searched over that run's three
#                  contenders (2816x3072x16384, the pick, 8192^3) with the defaults, timed side by side: why the
#                  pick read 61.2 TFLOP/s side by side and 56.8 as a burst. (On 2026-11-30 it compared the old burst timing with
#                  the new, and TN with NN: the README has the results.)
#   --no-tma       leave out the TMA bulk-copy variants (ceilings-bench --ceilings_tma), which the measurement
#                  otherwise adds: they are opt-in until they have run on a GPU. The PCIe one reads mapped
#                  pinned host memory with cp.async.bulk, which NVIDIA does not document either way: if it
#                  faults, the fault is that case's (registered last in the pcie family), not the harness's;
#                  the GPU tests that run them skip (CEILINGS_NO_TMA=1)
#   --sanitize     also run the GPU tests under compute-sanitizer memcheck (slow: out-of-bounds and
#                  misaligned accesses, leaks; give it a larger --deadline or fewer measurements)
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$SECONDS
invocation=$(printf '%q ' "$0" "$@")
deadline=540 tests=1 cpu_tests=1 tests_s=130 family_s=120 sanitize=0 time_quick=0 gemm_ab=0 tma=1 measure_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --deadline) deadline=${2:?--deadline needs seconds}; shift 2 ;;
    --no-tests) tests=0; shift ;;
    --gpu-tests-only) cpu_tests=0; shift ;;
    --time-quick) time_quick=1; shift ;;
    --gemm-ab) gemm_ab=1; shift ;;
    --no-tma) tma=0; shift ;;
    --tests-s) tests_s=${2:?--tests-s needs seconds}; shift 2 ;;
    --family-s) family_s=${2:?--family-s needs seconds}; shift 2 ;;
    --sanitize) sanitize=1; shift ;;
    --quick) measure_args+=(--quick); shift ;;
    --filter) measure_args+=(--filter "${2:?--filter needs a regex}"); shift 2 ;;
    --) shift; measure_args+=("$@"); break ;;
    *) echo "device-check: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
# The opt-in TMA bulk copies run here, where a GPU check is what they are waiting for.
[ "$tma" = 1 ] && measure_args=(--bench-arg=--ceilings_tma "${measure_args[@]}")
# Without them, the GPU tests that run them skip too (tests/gpu/gpu_test.hpp's CEILINGS_REQUIRE_TMA).
[ "$tma" = 0 ] && export CEILINGS_NO_TMA=1
# The opt-in reads of write-combined host memory (pcie.h2d_wc, pcie.h2d_sm_wc) too: a few seconds, not yet run.
measure_args=(--bench-arg=--ceilings_pcie_write_combined "${measure_args[@]}")
OUT=${OUT:-/tmp/ceilings-out}
mkdir -p "$OUT"
left() { echo $((deadline - (SECONDS - start))); }
# within KEEP CMD...: runs CMD with what is left of the deadline less 20 s and KEEP s (kept for what comes
# after it), or not at all when under 10 s would be left (`timeout 0` would mean no limit).
within() {
  local t=$(( $(left) - 20 - $1 ))
  shift
  if [ "$t" -lt 10 ]; then echo "not run (deadline): $*"; return 124; fi
  timeout -k 10 "$t" "$@"
}

# The commit this tree is (this machine's .git is another: the session's first commit with the tree laid
# over it), where the tree is still the one prepare-device-deps.sh recorded it for; the profiles' tool.git
# says the same (cmake/GitDescribeScript.cmake).
source_line="unknown: no .device-deps/source.txt (run bench/scripts/prepare-device-deps.sh and carry .device-deps)"
export CEILINGS_GIT_DESCRIBE="unknown"
if [ -f .device-deps/source.txt ]; then
  idx=$(mktemp -u)
  # safe.directory: the copied tree may belong to another user than the one running here (git refuses it then).
  tree=$(GIT_INDEX_FILE=$idx git -c safe.directory='*' -c core.fileMode=false -c core.autocrlf=false add -A . 2>/dev/null &&
         GIT_INDEX_FILE=$idx git -c safe.directory='*' write-tree 2>/dev/null)
  rm -f "$idx"
  describe=$(awk '$1 == "describe" {print $2}' .device-deps/source.txt)
  if [ -n "$tree" ] && [ "$tree" = "$(awk '$1 == "tree" {print $2}' .device-deps/source.txt)" ] &&
     [[ "$describe" =~ ^[A-Za-z0-9._-]+$ ]]; then
    export CEILINGS_GIT_DESCRIBE=$describe
    source_line="$describe (tree $tree, as prepare-device-deps.sh recorded it)"
  else
    source_line="unknown: this tree ($tree) is not the one prepare-device-deps.sh recorded ($(tr '\n' ' ' <.device-deps/source.txt)); prepare again after a change"
  fi
fi
echo "source: $source_line"
{
  echo "date: $(date -u +%FT%TZ)"
  echo "source: $source_line"
  echo "command: $invocation"
  echo "measure arguments: ${measure_args[*]}"
  timeout -k 5 30 nvidia-smi --query-gpu=name,driver_version,pci.bus_id,clocks.sm,clocks.max.sm,clocks.max.mem,power.limit,persistence_mode,ecc.mode.current --format=csv
  nproc; uname -r
  # The NVML field ids this driver's header gives for what ceilings does not read by field yet (the
  # per-reason clock-event durations and the newer NVLink counters): their numbering differs between
  # published headers, so read it off the header that ships with this driver.
  for h in /usr/include/nvml.h /usr/local/cuda/include/nvml.h /usr/local/cuda/targets/x86_64-linux/include/nvml.h; do
    [ -f "$h" ] || continue
    echo "== $h"
    grep -E '#define NVML_FI_(DEV_CLOCKS_EVENT_REASON|DEV_PERF_POLICY|DEV_NVLINK_COUNT|DEV_NVLINK_(CRC|REPLAY|RECOVERY)_[A-Z_]*TOTAL|DEV_MEMORY_TEMP|MAX)' "$h"
    break
  done
} >"$OUT/env.txt" 2>&1

gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
deps=()
# What was carried is what is used (the path ctest cmake.dependencies_from_source keeps working), so the
# build does not depend on which packages the GPU machine's image happens to hold.
[ -d .device-deps/cli11 ] && deps+=(-DCMAKE_DISABLE_FIND_PACKAGE_CLI11=ON -DCEILINGS_CLI11_INCLUDE_DIR="$PWD/.device-deps/cli11")
[ -d .device-deps/googletest ] && deps+=(-DCMAKE_DISABLE_FIND_PACKAGE_GTest=ON -DCEILINGS_GTEST_SOURCE_DIR="$PWD/.device-deps/googletest")
[ -d .device-deps ] || echo "no .device-deps: the build needs CLI11 and GoogleTest from the image (bench/scripts/prepare-device-deps.sh, carried, brings them)"
# What the steps after the measurement keep (the tests, the sanitizer, --time-quick and --gemm-ab).
sanitize_s=$(( sanitize ? tests_s : 0 ))
quick_keep=$(( (time_quick ? 60 : 0) + (gemm_ab ? 90 : 0) ))
# The build may take what leaves the measurement 120 s and the later steps their kept times; past that it is
# cut (10 s at least: `timeout 0` would mean no limit).
build_s=$(( $(left) - 120 - 20 - (tests ? tests_s : 0) - sanitize_s - quick_keep ))
# A build cut short spends the whole call: at least 240 s (a full build on a bare machine takes a minute or
# two) where the deadline has them, the measurement and later steps shrinking instead.
[ "$build_s" -lt 240 ] && build_s=$(( $(left) - 30 < 240 ? $(left) - 30 : 240 ))
[ "$build_s" -lt 10 ] && build_s=10
# Two steps: what the measurement needs, then the tests. A test target that fails to build (or is cut) costs the
# tests, not the measurement the call is for (review 55); this script then exits non-zero.
build_start=$SECONDS
# The tests are built for ctest, and the GPU tests for --sanitize (which runs their binary) too.
want_tests=$(( tests || sanitize ))
{
  timeout -k 10 180 cmake -S . -B build/device "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DCEILINGS_BUILD_TESTS=$([ "$want_tests" = 1 ] && echo ON || echo OFF) -Wno-deprecated "${deps[@]}" &&
    timeout -k 10 "$build_s" cmake --build build/device -j"$(nproc)" --target ceilings ceilings-bench
} >"$OUT/build.log" 2>&1 || { echo "build: failed or cut at $build_s s"; grep -E "error|Error|FAILED" "$OUT/build.log" | head -30; tail -20 "$OUT/build.log"; exit 1; }
echo "build: ceilings and ceilings-bench ok in $((SECONDS - start)) s"
tests_build_rc=0
if [ "$want_tests" = 1 ]; then
  tests_build_s=$(( build_s - (SECONDS - build_start) ))
  [ "$tests_build_s" -lt 10 ] && tests_build_s=10
  test_targets=(--target ceilings_gpu_tests)
  [ "$tests" = 1 ] && [ "$cpu_tests" = 1 ] && test_targets=()  # everything
  echo "== the tests (${test_targets[*]:-all targets}), within $tests_build_s s" >>"$OUT/build.log"
  timeout -k 10 "$tests_build_s" cmake --build build/device -j"$(nproc)" "${test_targets[@]}" >>"$OUT/build.log" 2>&1
  tests_build_rc=$?
  if [ "$tests_build_rc" != 0 ]; then
    echo "build of the tests: failed or cut at $tests_build_s s (exit $tests_build_rc): no tests run$([ "$sanitize" = 1 ] && echo ", no sanitizer"), the measurement goes on"
    grep -E "error|FAILED" "$OUT/build.log" | head -20
    tests=0
    sanitize=0
    sanitize_s=0
  else
    echo "build of the tests: ok in $((SECONDS - start)) s"
  fi
fi

# The measurement first: it is what the session is lent the GPU for, and GEMM, the family the targets
# hinge on most, runs last within it. The tests get the time kept back for them afterwards.
budget=$(( $(left) - 20 - (tests ? tests_s : 0) - sanitize_s - quick_keep ))
# A slow build comes out of the tests' time first, before it cuts GEMM's windows and bursts (the measurement wants
# about 240 s with 10 s windows; review 101): the tests run on what the measurement leaves. They keep 90 s: the 60 s
# the GPU tests need at the least, and 30 s for what `measure` runs past its --timeout (listing the devices before
# its clock starts, a cut family's kill grace, the health read and the writing), which comes out of their time too
# (review 102: a 60 s floor left them 40-50 s, certain to be cut). build_s above bounds the tests' build as well, so
# a build that ends late has built no tests and gives nothing.
if [ "$tests" = 1 ] && [ "$budget" -lt 240 ]; then
  give=$(( 240 - budget < tests_s - 90 ? 240 - budget : tests_s - 90 ))
  if [ "$give" -gt 0 ]; then
    budget=$(( budget + give ))
    echo "measure: a slow build: $give s of the tests' $tests_s s go to the measurement"
  fi
fi
# A late build still gets a short measurement: 60 s, or what is left of the deadline when less (10 s at least).
[ "$budget" -lt 60 ] && budget=$(( $(left) - 20 < 60 ? $(left) - 20 : 60 ))
[ "$budget" -lt 10 ] && budget=10
# The GEMM family took 145 s on the H200 with 15 s sustained windows before the cool-downs (119 s with them and
# 10 s windows, 2026-11-30), 120 of them its eight sustained windows (the first cases a tight --timeout cuts),
# the other families 63 s, before the TMA cases and the further pcie.h2d / h2d_sm candidates (a third SM read, the
# write-combined reads) were added (not yet timed):
# under 340 s for the whole measurement (the families estimated at 255-275 s with 15 s windows, review 55), 8 s
# windows keep all of them (unless asked otherwise).
if [ "$budget" -lt 340 ]; then
  if [[ " ${measure_args[*]-} " != *gemm_sustained_s* ]]; then
    measure_args+=(--bench-arg=--ceilings_gemm_sustained_s=8)
    echo "measure: under 340 s, so GEMM's sustained windows are 8 s"
  else
    echo "measure: under 340 s with the sustained windows given: the last of them may be cut"
  fi
fi
echo "measure: --timeout $budget s, --family-timeout $family_s s"
# measure's own clock starts after it has listed the devices: the outer limit allows for that and its writing.
timeout -k 15 $(( budget + 60 )) \
  build/device/ceilings measure --out "$OUT/h200.profile.json" --timeout "$budget" --family-timeout "$family_s" \
  "${measure_args[@]}" \
  >"$OUT/measure.log" 2>&1
rc=$?
echo "measure exit: $rc after $((SECONDS - start)) s"
# A measure killed past its own timeout leaves its locks and partial files: not files for the device tool's 8.
# So do the hidden temporaries of its atomic writes (".NAME.tmp.XXXXXX").
rm -f "$OUT"/.*.lock "$OUT"/*.partial.* "$OUT"/.*.partial.* "$OUT"/.*.tmp.*
grep -E "ERROR OCCURRED|timeout|kept the|no usable GPU|ceilings measure:" "$OUT/measure.log" | head -20

if [ "$tests" = 1 ]; then
  # GPU tests one at a time (several compare timings, which a neighbour on the GPU would disturb), then
  # the CPU ones in parallel with what is left (they pass off the GPU machine too; here they check its
  # CMake, Google Benchmark and toolkit). The Slurm test needs packages the GPU machine has not.
  # A GPU test that cannot reach the device fails here instead of skipping (tests/gpu/gpu_test.hpp).
  export CEILINGS_EXPECT_GPU=1
  gpu_rc=0
  cpu_rc=0
  # The GPU tests' output in full (-V): what they print as they pass (the GEMM units, a printed skip, the
  # sustained timeline, the health table) is part of what the call is for. Both keep back the time the
  # later steps were promised.
  {
    # --no-tests=error: a selection that finds no GPU test is no pass.
    within "$((sanitize_s + quick_keep))" ctest --test-dir build/device -L gpu -V --timeout 180 --no-tests=error
    gpu_rc=$?
    echo "gpu tests: exit $gpu_rc"
    if [ "$cpu_tests" = 1 ]; then
      # Some CPU tests take another branch here (CEILINGS_EXPECT_GPU, the real bench finding a GPU): their
      # failures count as much as the GPU tests'.
      within "$((sanitize_s + quick_keep))" ctest --test-dir build/device -LE 'slurm|gpu' --output-on-failure --timeout 120 -j8 \
        --no-tests=error
      cpu_rc=$?
      echo "cpu tests: exit $cpu_rc"
    fi
  } >"$OUT/tests.log" 2>&1
  summary=$(grep -E 'tests passed|tests failed' "$OUT/tests.log" | tr '\n' ' ')
  echo "tests (gpu, then cpu): ${summary:-no summary (cut by the deadline?)}"
  # ctest's own list of what failed, each kind of failure (a bus error, a kill, an illegal instruction, not run).
  sed -n '/The following tests FAILED:/,/Errors while running CTest/p' "$OUT/tests.log" | head -24
  # A skip is no pass: what it names was not covered here (review 96: the two-GPU peer tests on a one-GPU machine).
  echo "tests skipped, so not covered on this machine: $(grep -c '\*\*\*Skipped' "$OUT/tests.log")"
  grep -E '\[ skipped  \]' "$OUT/tests.log" | sed 's/^[0-9]*: //' | head -10
  if [ "$gpu_rc" = 124 ] || [ "$gpu_rc" = 137 ]; then
    echo "gpu tests cut by the deadline (exit $gpu_rc): this script exits non-zero"
    [ "$rc" = 0 ] && rc=1
  elif [ "$gpu_rc" != 0 ]; then
    echo "gpu tests failed (exit $gpu_rc): this script exits non-zero"
    [ "$rc" = 0 ] && rc=1
  fi
  if [ "$cpu_rc" != 0 ]; then
    echo "cpu tests failed or were cut (exit $cpu_rc): this script exits non-zero"
    [ "$rc" = 0 ] && rc=1
  fi
fi

if [ "$sanitize" = 1 ]; then
  if command -v compute-sanitizer >/dev/null; then
    within "$quick_keep" env CEILINGS_UNDER_SANITIZER=1 compute-sanitizer --tool memcheck --leak-check full --error-exitcode 9 --target-processes application-only \
      build/device/tests/ceilings_gpu_tests >"$OUT/sanitize.log" 2>&1
    echo "compute-sanitizer memcheck: exit $? ($(grep -c '^========= Invalid\|^========= Leaked' "$OUT/sanitize.log") findings)"
  else
    echo "compute-sanitizer: not on this machine" | tee "$OUT/sanitize.log"
  fi
fi

# "family times: hbm 7 s (46/46), ..." from a profile's measure.families.
family_times() {
  [ -f "$1" ] || { echo "family times: no profile at $1"; return; }
  python3 - "$1" <<'PY' 2>&1 || true
import json, sys
m = json.load(open(sys.argv[1])).get("measure", {})
print("family times: " + ", ".join(
    f"{f['family']} {f['seconds']:.1f} s ({f['finished_cases']}/{f['cases']})" + (" FAILED" if "failure" in f else "")
    for f in m.get("families", [])))
PY
}

if [ -f "$OUT/h200.profile.json" ]; then
  # Each family's wall time and finished cases (measure.families): what the next call can afford.
  family_times "$OUT/h200.profile.json"
  {
    echo "== qualify, default rules"; build/device/ceilings qualify "$OUT/h200.profile.json"; echo "exit $?"
    echo "== qualify, H200 targets (results/nvidia-h200/targets.rules.json)"
    build/device/ceilings qualify "$OUT/h200.profile.json" --rules results/nvidia-h200/targets.rules.json; echo "exit $?"
  } >"$OUT/qualify.txt" 2>&1
  # Every ceiling in full (detail, sweep, the sustained timeline, throttling and energy) for the notes.
  python3 -c 'import json,sys; print("\n".join(c["name"] for c in json.load(open(sys.argv[1]))["ceilings"]))' \
    "$OUT/h200.profile.json" 2>/dev/null | while read -r name; do
    build/device/ceilings show "$OUT/h200.profile.json" --ceiling "$name"; echo
  done >>"$OUT/qualify.txt" 2>&1
  echo
  build/device/ceilings show "$OUT/h200.profile.json"
  echo
  # Every way of reading pinned host memory (the plateau cases of the bench JSON, winner or not, failed or skipped
  # ones with their message): which reaches the most.
  python3 - "$OUT/h200.bench.json" <<'PY' 2>&1 || true
import json, sys
rows = []
for b in json.load(open(sys.argv[1])).get("benchmarks", []):
    name = b.get("name", "")
    if not name.startswith("pcie/h2d") or "pageable" in name or "/size:" in name:
        continue
    what = (f"{b['bytes_per_second'] / 1e9:.2f} GB/s" if "bytes_per_second" in b and not b.get("error_occurred")
            else "no value: " + str(b.get("error_message", "?"))[:120])
    rows.append(f"{name.split('/iterations')[0]} {what}")
print("pcie host-read cases: " + ("; ".join(rows) if rows else "none in the bench JSON"))
# Bidirectional points timed over the wall time where one direction outlasted the other's load (review 82): none
# expected on a healthy link.
counted = [b for b in json.load(open(sys.argv[1])).get("benchmarks", []) if "uncovered_samples" in b]
uncovered = [f"{b['name'].split('/iterations')[0]} {int(b['uncovered_samples'])}"
             for b in counted if b["uncovered_samples"] > 0]
print("bidirectional uncovered samples: " + ("; ".join(uncovered) if uncovered
                                             else f"none in {len(counted)} cases" if counted else "not recorded"))
PY
  # The NVML readings no GPU run has checked yet: the memory-repair flags (their struct layouts) and confidential
  # computing, as the profile recorded them.
  python3 - "$OUT/h200.profile.json" <<'PY' 2>&1 || true
import json, sys
p = json.load(open(sys.argv[1]))
h = p.get("health")
if not isinstance(h, dict):  # "unavailable: <why>" or "fault: <why>": said, not a traceback
    print(f"unchecked NVML readings: none, the profile's health is {h!r}")
    sys.exit(0)
m = h.get("before", {}).get("metrics", {})
keys = ["memory.unrepairable", "repair.channel_pending", "repair.tpc_pending"]
print("unchecked NVML readings: " + ", ".join(f"{k} {m.get(k, 'not recorded')}" for k in keys) +
      f", confidential_computing {p.get('device', {}).get('confidential_computing', 'not recorded')}" +
      f" ({p.get('device', {}).get('confidential_computing_mode', 'no mode')})")
PY
  echo "targets (check,rule,result,measured,threshold):"
  build/device/ceilings qualify "$OUT/h200.profile.json" --rules results/nvidia-h200/targets.rules.json \
    --format csv 2>/dev/null | grep -E ',minimum,' | cut -d, -f1-5
fi
if [ "$time_quick" = 1 ]; then
  quick_s=$(( $(left) - 20 ))
  quick=/tmp/ceilings-quick.profile.json
  rm -f "$quick" "${quick%.profile.json}.bench.json"  # a machine still warm from an earlier call may hold one
  if [ "$quick_s" -ge 45 ]; then
    qstart=$SECONDS
    echo "== ceilings measure --quick --timeout $quick_s" >>"$OUT/measure.log"
    build/device/ceilings measure --quick --out "$quick" --timeout "$quick_s" >>"$OUT/measure.log" 2>&1
    qrc=$?
    {
      echo "== ceilings measure --quick: exit $qrc after $((SECONDS - qstart)) s (--timeout $quick_s)"
      echo "quick $(family_times "$quick")"
    } | tee -a "$OUT/measure.log"
  else
    echo "quick: not run, $quick_s s left" | tee -a "$OUT/measure.log"
  fi
fi

if [ "$gemm_ab" = 1 ]; then
  ab_s=$(( $(left) - 20 ))
  if [ "$ab_s" -ge 60 ]; then
    ab=/tmp/ceilings-gemm-ab.json
    # Google Benchmark runs each registered case once, so each setting is a process of its own right after
    # the last (the card has had the earlier ones' bursts, not a search, more). Each setting: its flags, then
    # the types. The open question (2026-11-30, review 62): fp64's pick, 4096x4224x8192, read 61.2 TFLOP/s side
    # by side and 56.8 as a burst, at the power cap's clock; how much of that is the burst's warm-up and
    # pre-roll (the median timed GEMM about the 10th of the burst, some 46 ms in) and how much the length of one
    # GEMM (4.6 ms; 1.2 ms at 2816x3072x4096). Four settings, each its share of what is left: the short GEMM; the
    # pick without the warm-up's time; without warm-up time and pre-roll; and last, with the most time, the search
    # over the three contenders of that run with the defaults, whose side-by-side rounds give each one's slowest
    # and fastest round (a single shape has no contenders to time side by side) and whose pick is then burst.
    pick=--ceilings_gemm_shapes=4096x4224x8192
    settings=("--ceilings_gemm_shapes=2816x3072x4096|fp64" "$pick --ceilings_gemm_burst_warmup_s=0|fp64"
              "$pick --ceilings_gemm_burst_warmup_s=0 --ceilings_gemm_burst_preroll=0|fp64"
              "--ceilings_gemm_shapes=2816x3072x16384,4096x4224x8192,8192x8192x8192|fp64")
    # Each setting's raw JSON, one document a line, tagged with its setting (an eighth file; not with
    # --sanitize, whose log is the eighth).
    [ "$sanitize" = 0 ] && : >"$OUT/gemm-ab.jsonl"
    for i in "${!settings[@]}"; do
      setting=${settings[$i]%%|*} types=${settings[$i]#*|}
      # What is left of the deadline, shared among the settings still to run.
      t=$(( ($(left) - 20) / (${#settings[@]} - i) ))
      if [ "$t" -lt 15 ]; then echo "== gemm A/B: ${setting:-defaults}: not run, $t s left"; continue; fi
      # shellcheck disable=SC2086 # the setting is a list of flags
      timeout -k 5 "$t" build/device/ceilings-bench --ceilings_gemm_types="$types" \
        --ceilings_gemm_sustained_s=0 \
        --benchmark_filter="^gemm/(${types//,/|})/" $setting \
        --benchmark_format=json >"$ab" 2>>"$OUT/measure.log"
      echo "== gemm A/B: ${setting:-defaults} (exit $?)"
      [ "$sanitize" = 0 ] && python3 -c 'import json,sys; print(json.dumps({"setting": sys.argv[2], "bench": json.load(open(sys.argv[1]))}))' \
        "$ab" "$setting" >>"$OUT/gemm-ab.jsonl" 2>/dev/null
      python3 - "$ab" <<'PY' 2>&1 || true
import json, sys
try:
    doc = json.load(open(sys.argv[1]))
except (OSError, ValueError) as e:
    sys.exit(f"  no complete JSON (cut by its timeout?): {e}")
for b in doc.get("benchmarks", []):
    if b.get("error_occurred"):
        print(f"  {b['name'].split('/')[1]}: {b.get('error_message', '')[:160]}")
        continue
    rate = b.get("flop_per_second", 0) + b.get("op_per_second", 0)
    reranks = " ".join(f"{b[k] / 1e12:.0f}" for k in sorted(b) if k.startswith("rerank_rate_"))
    print(f"  {b['name'].split('/')[1]:9} {rate / 1e12:7.1f} TFLOP/s  search {b.get('search_rate', 0) / 1e12:7.1f}"
          f" TFLOP/s  side by side [{reranks}] pick {b.get('rerank_pick', 0):.0f}  cv {b.get('cv', 0):.4f}"
          f"  samples {b.get('samples', 0):.0f}x{b.get('units_per_sample', 0):.0f}"
          f"  {b.get('sm_clock_hz', 0) / 1e9:.2f} GHz  {b.get('power_instant_w', 0):.0f} W"
          f"  capped {b.get('power_cap_readings', 0):.0f}/{b.get('reason_readings', 0):.0f}  {b.get('m', 0):.0f}x{b.get('n', 0):.0f}x{b.get('k', 0):.0f}"
          f"  {'TN' if b.get('a_transposed', 1) else 'NN'} algo {b.get('algo_id', -1):.0f} tile {b.get('tile_id', -1):.0f}"
          f" stages {b.get('stages_id', -1):.0f} splitk {b.get('splitk', 0):.0f}")
    # The side-by-side rounds' spread, and each burst sample in the order taken: its rate, SM clock and
    # clock-event reasons (0x4: the software power cap).
    spread = " ".join(f"{b[f'rerank_min_rate_{i}'] / 1e12:.0f}-{b[f'rerank_max_rate_{i}'] / 1e12:.0f}"
                      for i in range(1, 7) if f"rerank_min_rate_{i}" in b)
    flop = 2 * b.get("m", 0) * b.get("n", 0) * b.get("k", 0)
    samples = []
    while f"sample_unit_s_{len(samples)}" in b:
        i, s = len(samples), b[f"sample_unit_s_{len(samples)}"]
        hz, why = b.get(f"sample_sm_clock_hz_{i}"), b.get(f"sample_clock_reasons_{i}")
        samples.append(f"{flop / s / 1e12 if s > 0 else 0:.1f}@{'?' if hz is None else f'{hz / 1e9:.2f}'}"
                       f"/{'?' if why is None else hex(int(why))}")
    print(f"    side-by-side rounds [{spread}]  samples (TFLOP/s@GHz/reasons) {' '.join(samples)}")
PY
    done | tee -a "$OUT/measure.log"
  else
    echo "gemm A/B: not run, $ab_s s left" | tee -a "$OUT/measure.log"
  fi
fi

if [ "$tests_build_rc" != 0 ]; then
  echo "the tests did not build (exit $tests_build_rc, build.log): this script exits non-zero"
  [ "$rc" = 0 ] && rc=1
fi
exit "$rc"
