"""A protocol worker that changes the lowering: it runs a real engine's worker (the command after
`--`) and, in every emitted LLVM module, makes the kernel keep a value in v72 (an inline asm that
clobbers it), so the kernel needs 73 VGPRs: past the occupancy steps of 64 and 72. Both engines
wrapped alike stay byte-identical, so parity is GREEN and the golden comparison sees the change.
Usage: clobber_vgprs_engine.py -- <worker command ...>"""
import json
import re
import subprocess
import sys

CLOBBER = '  call void asm sideeffect "", "~{v72}"()\n'


def mutate(text):
    return re.sub(r"^(define amdgpu_kernel [^\n]*\{\n[^\n]*:\n)", lambda m: m.group(1) + CLOBBER, text, flags=re.M)


def main():
    command = sys.argv[sys.argv.index("--") + 1:]
    worker = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    for line in sys.stdin:
        worker.stdin.write(line)
        worker.stdin.flush()
        answer = json.loads(worker.stdout.readline())
        for section in answer.get("ll", {}).values():
            if isinstance(section, dict) and isinstance(section.get("text"), str):
                section["text"] = mutate(section["text"])
        print(json.dumps(answer), flush=True)
    worker.stdin.close()
    return worker.wait()


if __name__ == "__main__":
    sys.exit(main())
