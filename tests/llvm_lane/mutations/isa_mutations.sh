#!/bin/bash
# Mutation tests of the ISA profile (docs/isa_profile.md): three lowering changes, each caught
# naming the counts. 1) a vector load split into 16-bit loads (the loads' alignment lost, on a
# target without unaligned access) breaks the depthwise intent on load width; 2) the packed FMA
# lost (packed FP32 turned off) breaks its intent on scalar FMAs; 3) 73 VGPRs held by every
# kernel (an engine wrapper, both engines alike so parity stays GREEN) is a CODE_CHANGED of the
# golden with the occupancy step, and a RESOURCES_CHANGED of the VGPRs.
# Usage: isa_mutations.sh <build dir> <source dir>
set -euo pipefail
build=$1 source=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cache="$work/cache"

expect() {  # expect <file> <fixed text>: the text is in the output, else the output and exit 1
  grep -qF -- "$2" "$1" || { echo "FAIL: '$2' not in the output:"; cat "$1"; exit 1; }
}

# cpl 4 on gfx942: 13 global_load_dwordx2 and 72 v_pk_fma_f32 at llvm19.
config="$source/parity/configs/conv_depthwise_dgrad_stream.json:3"
spec=$(/usr/bin/python3 -c "import json,sys; c=[c for c in json.load(open(sys.argv[1]))['configs'] if c['id']==3][0]; print(json.dumps(c['spec']))" "${config%:*}")
"$build/cpp_engine/kemit_emit" --config "$config" --flavor llvm19 > "$work/emitted.ll"
check() {  # check <name> <file>: check_llvm on one mutated module, held to its family's intents
  mkdir -p "$work/$1"
  cp "$2" "$work/$1/conv_depthwise_dgrad_stream.ll"
  "$build/llvm_lane/check_llvm" --root "$source" --cache "$cache" --flavor llvm19 --arch gfx942 --spec "$spec" \
    --module "$work/$1/conv_depthwise_dgrad_stream.ll" > "$work/$1.out" 2>&1 || true
}

check control "$work/emitted.ll"
expect "$work/control.out" "RESULT: GREEN"

sed -E -e 's/(load <4 x half>, ptr addrspace\(1\) %[a-z0-9_.]+), align [0-9]+/\1, align 2/' \
       -e 's/^(attributes #0 = \{)/\1 "target-features"="-unaligned-access-mode"/' "$work/emitted.ll" > "$work/split.ll"
check split "$work/split.ll"
expect "$work/split.out" "INTENT_BROKEN: intent 'no global load narrower than cpl x 16 bits'"
expect "$work/split.out" "with cpl 4, global_load_min_bits 16"
expect "$work/split.out" "RESULT: RED"

sed -E 's/^(attributes #0 = \{)/\1 "target-features"="-packed-fp32-ops"/' "$work/emitted.ll" > "$work/unpacked.ll"
check unpacked "$work/unpacked.ll"
expect "$work/unpacked.out" "INTENT_BROKEN: intent 'no scalar FMA: the FMAs are packed'"
expect "$work/unpacked.out" "with n_scalar_fma 144"

wrapper="/usr/bin/python3 $source/tests/llvm_lane/mutations/clobber_vgprs_engine.py --"
"$build/parity/run_diff" --root "$source" --build "$build" --check-golden elementwise:1 --cache "$cache" \
  --cpp-cmd "$wrapper $build/cpp_engine/kemit_emit --serve" \
  --py-cmd "$wrapper env PYTHONPATH=$source/py_engine /usr/bin/python3 -m kemit.emit --serve" > "$work/vgprs.out" 2>&1 || true
expect "$work/vgprs.out" "RESULT: GREEN"
expect "$work/vgprs.out" "CODE_CHANGED elementwise #1 ew_add_f32_v1_b256 [gfx90a]: llvm16 waves/SIMD 8 -> 6; llvm19 waves/SIMD 8 -> 6"
expect "$work/vgprs.out" "llvm19 vgpr 13 -> 73"
expect "$work/vgprs.out" "GOLDEN MISMATCH: CHANGED 1, RESOURCES_CHANGED 1, CODE_CHANGED 1"
echo "isa mutations: all three caught"
