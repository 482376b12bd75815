"""Lowering: canonical IR -> LLVM IR text for one flavor.

Structured control flow becomes basic blocks and phis (loops are rotated: a guard, then a
body that ends in the latch). Names are deterministic: `%v<id>` for IR values, `%v<id>.<role>`
for the helper values an op needs, `<kind><n>.<role>` for blocks in order of appearance.
"""
from .. import tables
from ..ir.types import element_type, parse_type, scalar
from ..tables import OP
from ..target.arch import find_arch
from .flavors import find_flavor
from .lower_lanes import LaneLowering
from .lower_mma import MmaLowering
from .lower_vector import VectorLowering
from .spelling import constant_literal, llvm_type, mangle

KERNEL_ATTRIBUTES = {"flat_work_group_size": "amdgpu-flat-work-group-size",
                     "waves_per_eu": "amdgpu-waves-per-eu"}
# LLVM spellings from tables/ops.json: opcodes and intrinsics (without overload suffix).
INT_OPCODES = {row["name"]: row["llvm"] for row in tables.ops_in("int_binary")}
FLOAT_OPCODES = {row["name"]: row["llvm"] for row in tables.ops_in("float_math") if row["llvm_form"] == "opcode"}
FLOAT_INTRINSICS = {row["name"]: row["llvm"] for row in tables.ops_in("float_math") if row["llvm_form"] == "intrinsic"}
CASTS = {row["name"]: row["llvm"] for row in tables.ops_in("cast")}
# Casts between float types: a vector one with bf16 goes lane by lane where llc cannot select it.
FLOAT_CASTS = tuple(row["name"] for row in tables.ops_in("cast") if row["cast"]["from"] == row["cast"]["to"] == "float")
DISPATCH_OFFSETS = {"x": (4, 12), "y": (6, 16), "z": (8, 20)}  # (workgroup size i16, grid size i32)


class LowerError(ValueError):
    pass


def processor_gate(arch_name, flavor):
    """The flavor gate: "" when the flavor's LLVM knows the processor, else the refusal."""
    if arch_name in flavor.processors:
        return ""
    return "{arch} needs flavor {oldest} or newer (got {flavor})".format(
        arch=arch_name, oldest=find_arch(arch_name).oldest_flavor, flavor=flavor.name)


def lower_kernel(kernel, flavor):
    return lower_module([kernel], flavor)


def lower_module(kernels, flavor):
    """One LLVM module holding every kernel in order: LDS globals, then one `define` per kernel,
    the declarations they share, and one attribute group per kernel (#0 for the first).
    lower_module([k], f) == lower_kernel(k, f)."""
    names = [kernel.name for kernel in kernels]
    buffers = [buffer.name for kernel in kernels for buffer in kernel.lds]
    if len(set(names)) != len(names) or len(set(buffers)) != len(buffers) or set(names) & set(buffers):
        raise LowerError("kernel and LDS names must be unique in a module (got {names})".format(
            names=", ".join(names + buffers)))
    if len({kernel.arch for kernel in kernels}) != 1:
        raise LowerError("the kernels of a module must share one arch")
    lowerings = [Lowering(kernel, flavor, index) for index, kernel in enumerate(kernels)]
    functions = [lowering.function_lines() for lowering in lowerings]
    what = f"kernel {names[0]}" if len(names) == 1 else f"kernels {', '.join(names)}"
    out = [f"; kemit {what} for {kernels[0].arch} at {flavor.name}",
           f'target datalayout = "{flavor.datalayout}"',
           'target triple = "amdgcn-amd-amdhsa"', ""]
    for lowering in lowerings:
        out.extend(lowering.lds_lines())
    if buffers:
        out.append("")
    for lines in functions:
        out.extend(lines + [""])
    declarations = {}
    for lowering in lowerings:
        for name, text in lowering.declarations.items():
            if declarations.setdefault(name, text) != text:
                raise LowerError("kernels of one module declare {name} differently".format(name=name))
    out.extend(declarations[name] for name in sorted(declarations))
    if declarations:
        out.append("")
    out.extend(f"attributes #{lowering.index} = {{ {lowering.kernel_attributes()} }}" for lowering in lowerings)
    return "\n".join(out) + "\n"


class Lowering(VectorLowering, LaneLowering, MmaLowering):
    def __init__(self, kernel, flavor, index=0):
        self.kernel = kernel
        self.flavor = flavor
        self.index = index  # the kernel's place in its module: its attribute group is #index
        self.names = {}
        self.declarations = {}
        self.lines = []
        self.block = "entry"
        self.blocks_made = 0

    # ---- module -------------------------------------------------------------------------
    def lds_lines(self):
        return [f"@{buffer.name} = internal unnamed_addr addrspace(3) global "
                f"[{buffer.count} x {llvm_type(buffer.element)}] poison, align {buffer.align}"
                for buffer in self.kernel.lds]

    def function_lines(self):
        """The kernel's `define`, from its signature to its closing brace."""
        kernel = self.kernel
        params = ", ".join(self.param_text(p) for p in kernel.params)
        for buffer in kernel.lds:
            self.names[buffer.value.id] = f"@{buffer.name}"
        self.lower_region(kernel.body)
        return ([f"define amdgpu_kernel void @{kernel.name}({params}) #{self.index} {{", "entry:"]
                + self.lines + ["  ret void", "}"])

    def kernel_attributes(self):
        pairs = {"target-cpu": self.kernel.arch, "uniform-work-group-size": "true"}
        for key, value in self.kernel.attrs.items():
            if key not in KERNEL_ATTRIBUTES:
                raise LowerError("kernel attribute '{key}' has no LLVM spelling".format(key=key))
            pairs[KERNEL_ATTRIBUTES[key]] = value
        return " ".join(f'"{key}"="{pairs[key]}"' for key in sorted(pairs))

    def param_text(self, param):
        self.names[param.value.id] = f"%{param.name}"
        words = [llvm_type(param.value.type)]
        attrs = param.attrs
        if attrs.get("noalias"):
            words.append("noalias")
        if attrs.get("nocapture"):
            words.append("captures(none)" if self.flavor.captures_attr else "nocapture")
        for flag in ("readonly", "writeonly"):
            if attrs.get(flag):
                words.append(flag)
        if "align" in attrs:
            words.append(f"align {attrs['align']}")
        return " ".join(words) + f" %{param.name}"

    # ---- helpers ------------------------------------------------------------------------
    def emit(self, text):
        self.lines.append("  " + text)

    def start_block(self, label):
        self.lines.append(f"{label}:")
        self.block = label

    def new_block_prefix(self, kind):
        prefix = f"{kind}{self.blocks_made}"
        self.blocks_made += 1
        return prefix

    def declare(self, name, result, args):
        self.declarations[name] = f"declare {result} @{name}({', '.join(args)})"

    def call(self, name, result_type, args):
        """Declare and call an intrinsic; args are (type text, operand text) pairs."""
        self.declare(name, result_type, [t for t, _ in args])
        return f"call {result_type} @{name}(" + ", ".join(f"{t} {v}" for t, v in args) + ")"

    def value(self, v):
        return self.names[v.id]

    def typed(self, v):
        return f"{llvm_type(v.type)} {self.value(v)}"

    def define(self, v, suffix=""):
        name = f"%v{v.id}{suffix}"
        if not suffix:
            self.names[v.id] = name
        return name

    # ---- ops ----------------------------------------------------------------------------
    def lower_region(self, region):
        for op in region.ops:
            if op.name == OP.yield_values:
                continue
            self.handler(op.name)(op)

    def handler(self, name):
        if name in INT_OPCODES:
            return self.lower_int_binary
        if name in FLOAT_OPCODES or name in FLOAT_INTRINSICS:
            return self.lower_float_op
        if name in CASTS:
            return self.lower_cast
        handler = getattr(self, "lower_" + name, None)
        if handler is None:
            raise LowerError("no lowering for op '{name}'".format(name=name))
        return handler

    def lower_const(self, op):
        result = op.results[0]
        self.names[result.id] = constant_literal(result.type, op.attrs["value"], self.flavor)

    def lower_workitem_id(self, op):
        dim = op.attrs["dim"]
        self.emit(f"{self.define(op.results[0])} = " + self.call(f"llvm.amdgcn.workitem.id.{dim}", "i32", []))

    def lower_workgroup_id(self, op):
        dim = op.attrs["dim"]
        self.emit(f"{self.define(op.results[0])} = " + self.call(f"llvm.amdgcn.workgroup.id.{dim}", "i32", []))

    def lower_num_workgroups(self, op):
        """grid size / workgroup size, both read from the HSA dispatch packet."""
        result = op.results[0]
        size_offset, grid_offset = DISPATCH_OFFSETS[op.attrs["dim"]]
        packet = self.define(result, ".packet")
        self.emit(f"{packet} = " + self.call("llvm.amdgcn.dispatch.ptr", "ptr addrspace(4)", []))
        for role, offset, t in (("size", size_offset, "i16"), ("grid", grid_offset, "i32")):
            address = self.define(result, f".{role}.addr")
            self.emit(f"{address} = getelementptr inbounds i8, ptr addrspace(4) {packet}, i64 {offset}")
            self.emit(f"{self.define(result, '.' + role)} = load {t}, ptr addrspace(4) {address}, "
                      f"align {int(t[1:]) // 8}")
        size32 = self.define(result, ".size32")
        self.emit(f"{size32} = zext i16 {self.define(result, '.size')} to i32")
        self.emit(f"{self.define(result)} = udiv i32 {self.define(result, '.grid')}, {size32}")

    def lower_int_binary(self, op):
        a, b = op.operands
        flags = [f for f in ("nuw", "nsw", "disjoint") if op.attrs.get(f)]
        if "disjoint" in flags and not self.flavor.or_disjoint:
            flags.remove("disjoint")
        opcode = " ".join([INT_OPCODES[op.name]] + flags)
        self.emit(f"{self.define(op.results[0])} = {opcode} {self.typed(a)}, {self.value(b)}")

    def lower_float_op(self, op):
        result = op.results[0]
        t = llvm_type(result.type)
        if op.name in FLOAT_OPCODES:  # fneg a, or fadd a, b
            first, *rest = op.operands
            text = f"{FLOAT_OPCODES[op.name]} {self.typed(first)}" + (f", {self.value(rest[0])}" if rest else "")
        else:
            name = f"{FLOAT_INTRINSICS[op.name]}.{mangle(result.type)}"
            text = self.call(name, t, [(t, self.value(v)) for v in op.operands])
        self.emit(f"{self.define(result)} = {text}")

    def lower_icmp(self, op):
        a, b = op.operands
        self.emit(f"{self.define(op.results[0])} = icmp {op.attrs['pred']} {self.typed(a)}, {self.value(b)}")

    def lower_fcmp(self, op):
        a, b = op.operands
        self.emit(f"{self.define(op.results[0])} = fcmp {op.attrs['pred']} {self.typed(a)}, {self.value(b)}")

    def lower_select(self, op):
        cond, a, b = op.operands
        self.emit(f"{self.define(op.results[0])} = select {self.typed(cond)}, {self.typed(a)}, {self.typed(b)}")

    def lower_cast(self, op):
        source, result = op.operands[0], op.results[0]
        if (result.type.kind == "vector" and "bf16" in (source.type.name, result.type.name)
                and op.name in FLOAT_CASTS and not self.flavor.vector_bf16_casts):
            return self.lower_cast_per_lane(op)
        opcode = CASTS[op.name] + (" nneg" if op.attrs.get("nneg") and self.flavor.zext_nneg else "")
        self.emit(f"{self.define(op.results[0])} = {opcode} {self.typed(source)} to {llvm_type(op.results[0].type)}")

    def lower_cast_per_lane(self, op):
        """extractelement / scalar cast / insertelement, for casts a flavor's llc cannot select."""
        source, result = op.operands[0], op.results[0]
        lane_type = llvm_type(element_type(result.type))
        vector = "poison"
        for lane in range(result.type.count):
            element = self.define(result, f".e{lane}")
            self.emit(f"{element} = extractelement {self.typed(source)}, i64 {lane}")
            self.emit(f"{self.define(result, f'.c{lane}')} = {CASTS[op.name]} {llvm_type(element_type(source.type))} "
                      f"{element} to {lane_type}")
            last = lane + 1 == result.type.count
            inserted = self.define(result) if last else self.define(result, f".i{lane}")
            self.emit(f"{inserted} = insertelement {llvm_type(result.type)} {vector}, "
                      f"{lane_type} {self.define(result, f'.c{lane}')}, i64 {lane}")
            vector = inserted

    def lower_ptr_add(self, op):
        pointer, index = op.operands
        result = op.results[0]
        element = llvm_type(parse_type(op.attrs["element"]))
        index_text = self.typed(index)
        # A 64-bit address takes an i64 offset: an i32 index is widened (it is in [0, 2^31)), an
        # i64 one (a row offset past 2^31) is the offset already.
        if pointer.type.space in ("global", "constant") and index.type == scalar("i32"):
            wide = self.define(result, ".idx")
            nneg = " nneg" if self.flavor.zext_nneg else ""
            self.emit(f"{wide} = zext{nneg} {index_text} to i64")
            index_text = f"i64 {wide}"
        inbounds = "inbounds nuw" if self.flavor.gep_nuw else "inbounds"
        self.emit(f"{self.define(result)} = getelementptr {inbounds} {element}, {self.typed(pointer)}, {index_text}")

    def lower_load(self, op):
        result = op.results[0]
        self.emit(f"{self.define(result)} = load {llvm_type(result.type)}, {self.typed(op.operands[0])}, "
                  f"align {op.attrs['align']}")

    def lower_store(self, op):
        value, pointer = op.operands
        self.emit(f"store {self.typed(value)}, {self.typed(pointer)}, align {op.attrs['align']}")

    def lower_atomic_add(self, op):
        """atomicrmw: the same spelling at every flavor (docs/ir.md, "Atomics", measured)."""
        pointer, value = op.operands
        operation = tables.OP_ROWS[op.name]["llvm"]
        self.emit(f"{self.define(op.results[0])} = atomicrmw {operation} {self.typed(pointer)}, {self.typed(value)} "
                  f'syncscope("{op.attrs["scope"]}") {op.attrs["order"]}, align {op.attrs["align"]}')

    def lower_barrier(self, op):
        self.emit('fence syncscope("workgroup") release')
        self.emit(self.call("llvm.amdgcn.s.barrier", "void", []))
        self.emit('fence syncscope("workgroup") acquire')

    def lower_readfirstlane(self, op):
        name = "llvm.amdgcn.readfirstlane" + (".i32" if self.flavor.readfirstlane_mangled else "")
        self.emit(f"{self.define(op.results[0])} = " + self.call(name, "i32", [("i32", self.value(op.operands[0]))]))

    # ---- structured control flow ---------------------------------------------------------
    def lower_for(self, op):
        """Rotated loop: entry guard, body with phis, latch at the end of the body."""
        prefix = self.new_block_prefix(op.name)
        lo, hi, step, *inits = op.operands
        iv, *iters = op.regions[0].args
        body_label, exit_label = f"{prefix}.body", f"{prefix}.exit"
        guard = self.define(iv, ".guard")
        self.emit(f"{guard} = icmp slt {self.typed(lo)}, {self.value(hi)}")
        self.emit(f"br i1 {guard}, label %{body_label}, label %{exit_label}")
        preheader = self.block
        self.start_block(body_label)
        yields = op.regions[0].ops[-1].operands
        next_iv = self.define(iv, ".next")
        carried = [(iv, lo, next_iv)]
        phi_at = len(self.lines)
        for arg in [iv] + iters:
            self.define(arg)
        self.lower_region(op.regions[0])
        latch = self.block
        carried += [(arg, init, self.value(y)) for arg, init, y in zip(iters, inits, yields)]
        phis = [f"  {self.value(arg)} = phi {llvm_type(arg.type)} [ {self.value(init)}, %{preheader} ], "
                f"[ {back}, %{latch} ]" for arg, init, back in carried]
        self.lines[phi_at:phi_at] = phis
        self.emit(f"{next_iv} = add nsw i32 {self.value(iv)}, {self.value(step)}")
        again = self.define(iv, ".again")
        self.emit(f"{again} = icmp slt i32 {next_iv}, {self.value(hi)}")
        self.emit(f"br i1 {again}, label %{body_label}, label %{exit_label}")
        self.start_block(exit_label)
        for result, init, y in zip(op.results, inits, yields):
            self.emit(f"{self.define(result)} = phi {llvm_type(result.type)} [ {self.value(init)}, %{preheader} ], "
                      f"[ {self.value(y)}, %{latch} ]")

    def lower_if(self, op):
        prefix = self.new_block_prefix(op.name)
        labels = [f"{prefix}.then"] + ([f"{prefix}.else"] if len(op.regions) == 2 else [])
        end = f"{prefix}.end"
        otherwise = labels[1] if len(labels) == 2 else end
        self.emit(f"br {self.typed(op.operands[0])}, label %{labels[0]}, label %{otherwise}")
        for label, region in zip(labels, op.regions):
            self.start_block(label)
            self.lower_region(region)
            self.emit(f"br label %{end}")
        self.start_block(end)

