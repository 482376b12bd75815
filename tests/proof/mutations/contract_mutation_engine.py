"""A protocol worker that plants one contract bug in what a real engine emits: it runs the engine's
worker (the command after `--`) and rewrites each answer's canonical text, launch plan and LLVM
modules alike, so both engines wrapped with the same mutation stay byte-identical while the
proof lane must refute the promise the mutation breaks (docs/contracts.md, "Witness runs").

  product  elementwise: the grid range widened to 2^23 + 1 workgroups whatever the chunk: the
           kernel's `workgroup * 256` (i32) passes 2^31 at the last workgroup only.
  widened  elementwise: chunks of 2^31 - 16 elements instead of 2^28: the grid's stride
           `workgroups * 256` (i32) reaches 2^31 at the widest grid the contract now allows.
  guard    conv_fwd_lds_halo: the last output store's guard (`ow + 3 < 14`, canonical `if`, LLVM
           branch) removed: a partial tile's lanes store past y.
  nuw      reduce_rows: the rows-per-block loop starts at -1 (canonical and LLVM alike, its row
           sum without `nuw`), and the lowering flags its latch `nuw`: -1 + 1 wraps unsigned.
  row32    gemm_mma: the first i64 row offset (b's `(k0 + r) * n + column`) left 32-bit: the i32
           product passes 2^31 once k * n does, which the contract's n allows. Its m and k ranges
           are cut (one row of tiles, k up to 256) so that every buffer of every witness stays
           within the 2^40 bytes a witness run takes; n's range, the one that breaks it, is kept.
Usage: contract_mutation_engine.py <mutation> -- <worker command ...>"""
import json
import re
import subprocess
import sys


def product(answer):
    answer["plan"] = answer["plan"].replace("grid 1..ceil(count,256),1,1 ", "grid 1..8388609,1,1 ")
    return answer


def widened(answer):
    answer["plan"] = answer["plan"].replace("chunks n by 268435456 ", "chunks n by 2147483632 ")
    return answer


def without_guard(canonical, value):
    """The canonical text without its `if %<value> {` (the body kept, one level out)."""
    lines = canonical.split("\n")
    guard = next(i for i, line in enumerate(lines) if line.strip() == f"if %{value} {{")
    indent = lines[guard][:len(lines[guard]) - len(lines[guard].lstrip())]
    close = next(i for i in range(guard + 1, len(lines)) if lines[i] == indent + "}")
    body = [line[2:] for line in lines[guard + 1:close]]
    return "\n".join(lines[:guard] + body + lines[close + 1:])


def guard(answer):
    answer["canonical"] = without_guard(answer["canonical"], 192)
    for section in llvm_sections(answer):
        section["text"] = re.sub(r"br i1 %v192, label (%\S+), label %\S+", r"br label \1", section["text"])
    return answer


def nuw(answer):
    canonical = answer["canonical"]
    canonical = canonical.replace("%14 = const {value=0} : i32", "%14 = const {value=-1} : i32", 1)
    answer["canonical"] = canonical.replace("%19 = add %17, %18 {nsw, nuw} : i32", "%19 = add %17, %18 {nsw} : i32")
    for section in llvm_sections(answer):
        text = section["text"].replace("%v18.guard = icmp slt i32 0,", "%v18.guard = icmp slt i32 -1,")
        text = text.replace("%v18 = phi i32 [ 0, %for0.body ]", "%v18 = phi i32 [ -1, %for0.body ]")
        text = text.replace("%v19 = add nuw nsw i32 %v17, %v18", "%v19 = add nsw i32 %v17, %v18")
        section["text"] = text.replace("%v18.next = add nsw i32 %v18, 1", "%v18.next = add nuw nsw i32 %v18, 1")
    return answer


# The first wide row offset, canonical and LLVM: zext row, mul by n's i64, zext column, add (i64).
WIDE_CANONICAL = re.compile(r"( *)%(\d+) = zext (%\d+) \{nneg\} : i64\n\1%(\d+) = mul %\2, %\d+ \{nsw, nuw\} : i64\n"
                            r"\1%(\d+) = zext (%\d+) \{nneg\} : i64\n\1%(\d+) = add %\4, %\5 \{nsw, nuw\} : i64\n")
WIDE_LLVM = re.compile(r"( *)%v(\d+) = zext( nneg)? i32 (%\S+) to i64\n\1%v(\d+) = mul nuw nsw i64 %v\2, %\S+\n"
                       r"\1%v(\d+) = zext( nneg)? i32 (%\S+) to i64\n\1%v(\d+) = add nuw nsw i64 %v\5, %v\6\n")


def row32(answer):
    """The same four values, the offset formed in i32 (row * n + column) and only then widened."""
    n = re.search(r"^  param (%\d+) n : i32$", answer["canonical"], flags=re.M).group(1)

    def canonical(m):
        pad, first, row, second, third, column, last = m.groups()
        return (f"{pad}%{first} = mul {row}, {n} {{nsw, nuw}} : i32\n"
                f"{pad}%{second} = add %{first}, {column} {{nsw, nuw}} : i32\n"
                f"{pad}%{third} = const {{value=0}} : i64\n"
                f"{pad}%{last} = zext %{second} {{nneg}} : i64\n")

    def llvm(m):
        pad, first, nneg, row, second, _, _, column, last = m.groups()
        return (f"{pad}%v{first} = mul nuw nsw i32 {row}, %n\n"
                f"{pad}%v{second} = add nuw nsw i32 %v{first}, {column}\n"
                f"{pad}%v{last} = zext{nneg or ''} i32 %v{second} to i64\n")

    plan = re.sub(r"^size m_tiles 0\.\.\d+$", "size m_tiles 0..1", answer["plan"], flags=re.M)
    answer["plan"] = re.sub(r"^size k_tiles 1\.\.\d+$", "size k_tiles 1..8", plan, flags=re.M)
    answer["canonical"] = WIDE_CANONICAL.sub(canonical, answer["canonical"], count=1)
    for section in llvm_sections(answer):
        section["text"] = WIDE_LLVM.sub(llvm, section["text"], count=1)
    return answer


def llvm_sections(answer):
    return [s for s in answer.get("ll", {}).values() if isinstance(s, dict) and isinstance(s.get("text"), str)]


MUTATIONS = {"product": product, "widened": widened, "guard": guard, "nuw": nuw, "row32": row32}


def main():
    mutate = MUTATIONS[sys.argv[1]]
    command = sys.argv[sys.argv.index("--") + 1:]
    worker = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    for line in sys.stdin:
        worker.stdin.write(line)
        worker.stdin.flush()
        answer = json.loads(worker.stdout.readline())
        if isinstance(answer.get("canonical"), str) and isinstance(answer.get("plan"), str):
            answer = mutate(answer)
        print(json.dumps(answer), flush=True)
    worker.stdin.close()
    return worker.wait()


if __name__ == "__main__":
    sys.exit(main())
