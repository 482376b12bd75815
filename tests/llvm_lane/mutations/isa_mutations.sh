#!/bin/bash
# Mutation tests of the ISA profile (docs/isa_profile.md): four lowering changes, each caught
# naming the counts. 1) a vector load split into 16-bit loads (the loads' alignment lost, on a
# target without unaligned access) breaks the depthwise intent on load width; 2) the packed FMA
# lost (packed FP32 turned off) breaks its intent on scalar FMAs; 3) 73 VGPRs held by every
# kernel (an engine wrapper, both engines alike so parity stays GREEN) is a CODE_CHANGED of the
# golden with the occupancy step, and a RESOURCES_CHANGED of the VGPRs; 4) a split-C partial
# store narrowed back to four scalar stores (volatile, so that LLVM cannot merge them again)
# breaks conv_fwd_lds_halo's intent on 128-bit partial stores.
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
check() {  # check <name> <file> [family] [spec]: check_llvm on one mutated module, held to its family's intents
  local family=${3:-conv_depthwise_dgrad_stream}
  mkdir -p "$work/$1"
  cp "$2" "$work/$1/$family.ll"
  "$build/llvm_lane/check_llvm" --root "$source" --cache "$cache" --flavor llvm19 --arch gfx942 --spec "${4:-$spec}" \
    --module "$work/$1/$family.ll" > "$work/$1.out" 2>&1 || true
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
# conv_fwd_lds_halo config 10 (split_c 2, gfx942): one <4 x f32> partial store per lane.
config="$source/parity/configs/conv_fwd_lds_halo.json:10"
split_spec=$(/usr/bin/python3 -c "import json,sys; c=[c for c in json.load(open(sys.argv[1]))['configs'] if c['id']==10][0]; print(json.dumps(c['spec']))" "${config%:*}")
"$build/cpp_engine/kemit_emit" --config "$config" --flavor llvm19 > "$work/split_c.ll"
check split_c "$work/split_c.ll" conv_fwd_lds_halo "$split_spec"
expect "$work/split_c.out" "RESULT: GREEN"
store='^  store <4 x float> (%[a-z0-9_.]+), ptr addrspace\(1\) (%[a-z0-9_.]+), align 16$'
grep -qE "$store" "$work/split_c.ll" || { echo "FAIL: no <4 x float> partial store in config 10:"; cat "$work/split_c.ll"; exit 1; }
scalar='  %narrow.0 = extractelement <4 x float> \1, i32 0\n  store volatile float %narrow.0, ptr addrspace(1) \2, align 16'
for lane in 1 2 3; do
  scalar+="\\n  %narrow.p$lane = getelementptr inbounds float, ptr addrspace(1) \\2, i32 $lane"
  scalar+="\\n  %narrow.$lane = extractelement <4 x float> \\1, i32 $lane"
  scalar+="\\n  store volatile float %narrow.$lane, ptr addrspace(1) %narrow.p$lane, align 4"
done
sed -E "s/$store/$scalar/" "$work/split_c.ll" > "$work/narrowed.ll"
check narrowed "$work/narrowed.ll" conv_fwd_lds_halo "$split_spec"
expect "$work/narrowed.out" "INTENT_BROKEN: intent 'split-C partials written as 128-bit stores'"
expect "$work/narrowed.out" "with global_store_max_bits 32, global_store_min_bits 32"
expect "$work/narrowed.out" "RESULT: RED"
echo "isa mutations: all four caught"
