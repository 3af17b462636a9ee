#!/usr/bin/env bash
# Checks that the cache hints and load kinds the memory kernels ask for in PTX become the sm_90
# machine instructions they are meant to be (ptxas maps some PTX qualifiers in surprising ways:
# an explicit ld.global.ca becomes a CTA-scope strong load, for instance), that the FMA peak kernels
# keep every unrolled FMA of every chain as one instruction, and that no kernel spills.
# Usage: check_sass.sh <libceilings_kernels.a or object> [cuobjdump] [require-sm90]. Exit 77 (skipped) without
# cuobjdump (scripts/install-deps.sh --sass installs it, with the nvdisasm it needs, where the toolkit lacks
# them), and without sm_90 code unless require-sm90 says the build asked for it (then that is a failure).
set -uo pipefail
lib=$1
cuobjdump=${2:-}
require_sm90=${3:-}
[ -n "$cuobjdump" ] && [ ! -x "$cuobjdump" ] && cuobjdump=""
[ -z "$cuobjdump" ] && cuobjdump=$(command -v cuobjdump || true)
if [ -z "$cuobjdump" ]; then echo "cuobjdump not found: SASS check skipped"; exit 77; fi
sass=$(mktemp)
trap 'rm -f "$sass"' EXIT
if ! "$cuobjdump" --dump-sass "$lib" >"$sass" 2>&1; then
  # cuobjdump needs nvdisasm beside it; a toolkit without one cannot run this check.
  if grep -q "nvdisasm" "$sass"; then echo "nvdisasm not found: SASS check skipped"; exit 77; fi
  cat "$sass"; exit 1
fi
if ! grep -q "arch = sm_90" "$sass"; then
  if [ "$require_sm90" = require-sm90 ]; then echo "FAIL: no sm_90 machine code in $lib, built for sm_90"; exit 1; fi
  echo "no sm_90 machine code in $lib: SASS check skipped"; exit 77
fi

fail=0
# The SASS of every function whose mangled name matches $1 (sm_90 only).
function_sass() {
  awk -v pat="$1" '/arch = sm_/{sm90 = ($0 ~ /sm_90/)} /Function : /{p = sm90 && ($0 ~ pat)} p' "$sass"
}
expect() {  # expect <function regex> <instruction regex> <what it means>
  local body
  body=$(function_sass "$1")  # not piped into grep -q: with pipefail, awk's SIGPIPE would read as a miss
  if [ -z "$body" ]; then echo "FAIL: no function matches $1"; fail=1; return; fi
  if ! grep -qE "$2" <<<"$body"; then
    echo "FAIL: $1 has no $2 ($3)"; fail=1
  else
    echo "ok:   $1 has $2"
  fi
}
expect_not() {  # expect_not <function regex> <instruction regex> <why>
  local body
  body=$(function_sass "$1")
  if [ -z "$body" ]; then echo "FAIL: no function matches $1"; fail=1; return; fi
  if grep -qE "$2" <<<"$body"; then
    echo "FAIL: $1 has $2 ($3)"; fail=1
  else
    echo "ok:   $1 has no $2"
  fi
}

# expect_chains <function regex> <FMA opcode regex> <at least> <registers> <what it means>: at least that many
# chain FMAs (the destination is also the accumulating source: "FFMA R4, R4, ..." or "DFMA R4, Ra, R4, ...")
# into at least that many distinct registers. Start-value arithmetic is not counted, and chains merged
# into fewer registers (or packed two to an instruction) fail even where an unrolled trip loop repeats them.
expect_chains() {
  local body chains n regs
  body=$(function_sass "$1")
  if [ -z "$body" ]; then echo "FAIL: no function matches $1"; fail=1; return; fi
  chains=$(grep -oE "$2 (R[0-9]+), (R[0-9]+(\.reuse)?, )?\1[ .,]" <<<"$body" | sed -E 's/^[^ ]+ (R[0-9]+),.*/\1/')
  n=$(grep -c . <<<"$chains")
  regs=$(sort -u <<<"$chains" | grep -c .)
  if [ "$n" -lt "$3" ] || [ "$regs" -lt "$4" ]; then
    echo "FAIL: $1 has $n chain $2 into $regs registers, fewer than $3 into $4 ($5)"; fail=1
  else
    echo "ok:   $1 has $n chain $2 into $regs registers (at least $3 into $4)"
  fi
}

# expect_loads_first <function regex> <what it means>: in every matching function, no global store comes
# before a global load (the unrolled loads all issue before the first store waits for its data).
expect_loads_first() {
  local order
  order=$(function_sass "$1" | awk '/Function : /{printf "\n%s ", $3} /LDG/{printf "L"} /STG/{printf "S"}')
  if [ -z "$order" ]; then echo "FAIL: no function matches $1"; fail=1; return; fi
  if grep -E " [LS]*SL" <<<"$order"; then
    echo "FAIL: $1 stores before it loads ($2)"; fail=1
  else
    echo "ok:   $1 loads before it stores"
  fi
}

# expect_loads_before_use <function regex> <count> <what it means>: in every matching function, <count> global
# loads issue before the first instruction that reads a register one of them wrote (so all are in flight at
# once). Sources only: a store's or reduction's operands are all read, another instruction's first operand
# is its destination; a register counts however it is decorated (R4.reuse, -R4, |R4|, [R4.64]).
expect_loads_before_use() {
  local result
  result=$(function_sass "$1" | awk -v want="$2" '
    function report() { if (name != "") print name, (loads >= want ? "ok" : "short"), loads }
    /Function : /{report(); name = $3; loads = 0; done = 0; delete dest; next}
    done || name == "" {next}
    /LDG/ {
      if (match($0, /LDG[.A-Z0-9]* R[0-9]+/)) { r = substr($0, RSTART, RLENGTH); sub(/.* R/, "", r); for (i = 0; i < 4; ++i) dest["R" (r + i)] = 1 }
      ++loads; next
    }
    /\/\*[0-9a-f]+\*\// {
      text = $0; sub(/;.*/, "", text); sub(/^[ \t]*\/\*[0-9a-f]+\*\/[ \t]*/, "", text); sub(/^@!?U?P[T0-9]+[ \t]+/, "", text)
      gsub(/UR[0-9]+/, "", text)  # uniform registers are another file
      op = text; sub(/[ \t].*/, "", op)
      operands = text; sub(/^[^ \t]+[ \t]*/, "", operands)
      n = split(operands, part, ",")
      for (i = (op ~ /^(ST|RED)/ ? 1 : 2); i <= n; ++i) {
        rest = part[i]
        while (match(rest, /R[0-9]+/)) {
          if (substr(rest, RSTART, RLENGTH) in dest) { done = 1; break }
          rest = substr(rest, RSTART + RLENGTH)
        }
        if (done) break
      }
    }
    END { report() }')
  if [ -z "$result" ]; then echo "FAIL: no function matches $1"; fail=1; return; fi
  if grep -q " short " <<<"$result"; then
    echo "FAIL: fewer than $2 loads before the first use ($3): $result"; fail=1
  else
    echo "ok:   $1 issues $2 loads before using one"
  fi
}

# HBM streaming: hint 0 = plain loads and stores, hint 1 = evict-first loads and stores, hint 2 =
# L1-no-allocate loads with a 256-byte L2 prefetch; every access 16 bytes wide. No load is non-coherent
# (.nc, LDG...CONSTANT): ptxas may hoist stores above those, which leaves fewer bytes in flight.
for u in 2 4 8; do
  expect "11read_kernelILi${u}ELi1E" "LDG\.E\.EF\.128" "streaming 16-byte load"
  expect "11read_kernelILi${u}ELi2E" "LDG\.E\.NA\.LTC256B\.128" "L1 no-allocate + L2 256B prefetch load"
  expect "11copy_kernelILi${u}ELi0E" "LDG\.E\.128" "plain 16-byte load"
  expect "11copy_kernelILi${u}ELi1E" "STG\.E\.EF\.128" "streaming 16-byte store"
  expect "12write_kernelILi${u}ELi1E" "STG\.E\.EF\.128" "streaming 16-byte store"
  expect "12write_kernelILi${u}ELi0E" "STG\.E\.128" "plain 16-byte store"
  expect "12triad_kernelILi${u}ELi2E" "LDG\.E\.NA\.LTC256B\.128" "prefetching load"
done
expect_not "(read|copy|triad)_kernel" "LDG.*CONSTANT" "a non-coherent load lets stores move between the loads"
expect_loads_first "(copy|triad)_kernel" "every unrolled load in flight before the first store"
expect_not "(read|write|copy|triad)_kernel" "(LDL|STL)" "register spills to local memory"
# The TMA copy: bulk loads (global to shared) and bulk stores (shared to global) on the TMA unit, waits on the
# stage's mbarrier, no global load or store of its own (no register holds the data).
expect "16copy_bulk_kernel" "UBLKCP\.S\.G" "bulk copy global -> shared"
expect "16copy_bulk_kernel" "UBLKCP\.G\.S" "bulk copy shared -> global"
expect "16copy_bulk_kernel" "SYNCS\.PHASECHK" "mbarrier phase wait"
expect_not "16copy_bulk_kernel" "(LDG|STG)\.E\.128" "16-byte loads or stores of the data itself"
# l2.read: 16-byte loads that bypass L1 (L2 is the point of coherence of a .cg load).
expect "14l2_read_kernelILNS0_6L2LoadE0E" "LDG\.E\.128\.STRONG\.GPU" "L2-only 16-byte load"
expect "14l2_read_kernelILNS0_6L2LoadE1E" "LDG\.E\.NA\.128" "16-byte load that allocates no L1 line"
# The chunked l2.read: the same two loads, twelve of them issued back to back (all in flight), no spills.
expect "21l2_read_chunks_kernelILNS0_6L2LoadE0E" "LDG\.E\.128\.STRONG\.GPU" "L2-only 16-byte load"
expect_loads_before_use "21l2_read_chunks_kernelILNS0_6L2LoadE" 12 "every thread's twelve loads of a chunk in flight at once"
expect_loads_before_use "14l2_read_kernelILNS0_6L2LoadE" 4 "the persistent kernel's four loads of a trip in flight at once"
expect "21l2_read_chunks_kernelILNS0_6L2LoadE1E" "LDG\.E\.NA\.128" "16-byte load that allocates no L1 line"
expect_not "l2_read_(chunks_)?kernel" "(LDL|STL)" "register spills to local memory"
# smem.read: 16-byte shared-memory loads.
expect "16smem_read_kernel" "LDS\.128" "16-byte shared-memory load"
# Pointer chase: the sweep's loads must be plain (L1-cached) loads, the ceilings' L2-only ones.
# Each hop is the load alone: the chain holds addresses, so no address arithmetic sits in the dependent chain.
expect "12chase_kernelILb1E" "LDG\.E\.64 " "plain L1-cacheable load"
expect_not "12chase_kernelILb1E" "LDG\.E\.64\.STRONG" "a strong load need not hit L1"
expect "12chase_kernelILb0E" "LDG\.E\.64\.STRONG\.GPU" "L2-only load"
expect_not "12chase_kernelILb" "IMAD\.WIDE|LEA" "address arithmetic between dependent loads"
# FMA peaks: kFmaChains (8) chains of kFmaUnroll (63) FMAs per trip, each one machine FMA on the CUDA cores
# (not folded, not merged, not turned into tensor-core MMAs): at least 504 chain FMAs into 8 registers.
expect_chains "10fma_kernelIfE" "FFMA" 504 8 "fp32 FMA chains"
expect_chains "10fma_kernelIdE" "DFMA" 504 8 "fp64 FMA chains"
expect_chains "10fma_kernelI7__half2E" "HFMA2[.MA]{0,4}" 504 8 "packed fp16 FMA chains"
expect_chains "10fma_kernelI14__nv_bfloat162E" "HFMA2[.MA]{0,4}\\.BF16_V2" 504 8 "packed bf16 FMA chains"
# (HFMA2[.MA]{0,4}: HFMA2 or HFMA2.MMA; a group would take the \\1 that expect_chains matches the chain with.)
# The packed FMAs use both of their pipes: a quarter or more issue as HFMA2.MMA, into two chains or more (ptxas
# gives it half the chains; with a and b packed into one register as halves it gave it none, and the H200 ran
# fp16 at the fp32 rate).
expect_chains "10fma_kernelI7__half2E" "HFMA2\\.MMA" 126 2 "fp16 FMAs on the second (MMA) pipe"
expect_chains "10fma_kernelI14__nv_bfloat162E" "HFMA2\\.MMA\\.BF16_V2" 126 2 "bf16 FMAs on the second (MMA) pipe"
# The packed kernels count their trips in a float (their alternating chains only show the parity): an FADD
# per trip that the compiler must not fold away.
expect "10fma_kernelI7__half2E" "FADD" "the fp16 kernel's trip counter"
expect "10fma_kernelI14__nv_bfloat162E" "FADD" "the bf16 kernel's trip counter"
# No kernel of the library spills to local memory.
expect_not "." "(LDL|STL)" "register spills to local memory"
exit $fail
