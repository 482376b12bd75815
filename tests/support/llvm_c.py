"""Parse and verify LLVM IR text with a real libLLVM, in process, through the LLVM C API.

One loaded library per flavor (ctypes loads each with RTLD_LOCAL, so 16, 19 and 22 live side by
side in one process). check(text) returns "" when the module parses, verifies, and declares no
`llvm.*` function that this LLVM does not know (an unknown intrinsic is accepted silently by the
parser and by llc, which then emits an external call: see llvm_flavors.md §5); otherwise the
first diagnostics.
"""
import ctypes
import os

LIBRARY_DIR = "/usr/lib/x86_64-linux-gnu"
LIBRARIES = {"llvm16": "libLLVM-16.so.1", "llvm19": "libLLVM.so.19.1", "llvm22": "libLLVM.so.22.1"}
PACKAGES = {"llvm16": "llvm-16", "llvm19": "llvm-19", "llvm22": "llvm-22"}


class MissingLLVM(RuntimeError):
    """The flavor's libLLVM is not installed; the message names the package."""


class Checker:
    def __init__(self, flavor):
        path = os.path.join(LIBRARY_DIR, LIBRARIES[flavor])
        if not os.path.exists(path):
            raise MissingLLVM(f"{path} is missing: the {flavor} checks need it; install it with "
                              f"`apt-get install {PACKAGES[flavor]}` (package lib{PACKAGES[flavor].replace('-', '')})")
        self.flavor = flavor
        self.lib = lib = ctypes.CDLL(path)
        p, c = ctypes.c_void_p, ctypes.c_char_p
        signatures = {
            "LLVMContextCreate": (p, []),
            "LLVMContextDispose": (None, [p]),
            "LLVMCreateMemoryBufferWithMemoryRangeCopy": (p, [c, ctypes.c_size_t, c]),
            "LLVMParseIRInContext": (ctypes.c_int, [p, p, ctypes.POINTER(p), ctypes.POINTER(p)]),
            "LLVMVerifyModule": (ctypes.c_int, [p, ctypes.c_int, ctypes.POINTER(p)]),
            "LLVMDisposeModule": (None, [p]),
            "LLVMDisposeMessage": (None, [p]),
            "LLVMGetFirstFunction": (p, [p]),
            "LLVMGetNextFunction": (p, [p]),
            "LLVMGetValueName2": (p, [p, ctypes.POINTER(ctypes.c_size_t)]),
            "LLVMGetIntrinsicID": (ctypes.c_uint, [p]),
        }
        for name, (result, args) in signatures.items():
            function = getattr(lib, name)
            function.restype, function.argtypes = result, args

    def _message(self, pointer):
        if not pointer:
            return ""
        text = ctypes.cast(pointer, ctypes.c_char_p).value.decode("utf-8", "replace")
        self.lib.LLVMDisposeMessage(pointer)
        return text

    def check(self, text, name="module.ll"):
        lib = self.lib
        data = text.encode("utf-8")
        context = lib.LLVMContextCreate()
        try:
            # A copy is NUL-terminated, which the lexer needs; parsing takes ownership of it.
            buffer = lib.LLVMCreateMemoryBufferWithMemoryRangeCopy(data, len(data), name.encode())
            module, message = ctypes.c_void_p(), ctypes.c_void_p()
            if lib.LLVMParseIRInContext(context, buffer, ctypes.byref(module), ctypes.byref(message)):
                return "parse error: " + (self._message(message) or "(no message)")
            try:
                problems = []
                message = ctypes.c_void_p()
                if lib.LLVMVerifyModule(module, 2, ctypes.byref(message)):  # 2 = LLVMReturnStatusAction
                    problems.append("verifier: " + (self._message(message) or "(no message)"))
                else:
                    self._message(message)
                function = lib.LLVMGetFirstFunction(module)
                while function:
                    length = ctypes.c_size_t()
                    raw = lib.LLVMGetValueName2(function, ctypes.byref(length))
                    fname = ctypes.string_at(raw, length.value).decode("utf-8", "replace")
                    if fname.startswith("llvm.") and lib.LLVMGetIntrinsicID(function) == 0:
                        problems.append(f"unknown intrinsic: {fname}")
                    function = lib.LLVMGetNextFunction(function)
                return "\n".join(problems)
            finally:
                lib.LLVMDisposeModule(module)
        finally:
            lib.LLVMContextDispose(context)


_CHECKERS = {}


def checker(flavor):
    """The shared checker of a flavor (raises MissingLLVM naming the package to install)."""
    if flavor not in _CHECKERS:
        _CHECKERS[flavor] = Checker(flavor)
    return _CHECKERS[flavor]
