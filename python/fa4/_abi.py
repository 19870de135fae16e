"""The C API of libfa4 (lib/fa4.h) as ctypes declarations: structs, enum values and
function prototypes.  This is the binding's only description of the ABI;
tests/test_abi.py compares it with the compiler's view of the header
(tests/abi_dump.c) and with the header text, so a change to fa4.h that is not
made here too fails `make check`.

Field order, types and the _INIT defaults follow fa4.h exactly.  C enums are
passed as int (the dump checks their size).
"""
import ctypes as C
import struct

# ------------------------------------------------------------------ enums

OK, EINVAL, ENOMEM, ENODEV, ENOTSUP, ECOMPILE, EDB, ECUDA, ENOFIT = range(9)
STATUS_NAMES = {
    OK: "FA4_OK", EINVAL: "FA4_EINVAL", ENOMEM: "FA4_ENOMEM", ENODEV: "FA4_ENODEV",
    ENOTSUP: "FA4_ENOTSUP", ECOMPILE: "FA4_ECOMPILE", EDB: "FA4_EDB", ECUDA: "FA4_ECUDA",
    ENOFIT: "FA4_ENOFIT",
}

DTYPE_BF16, DTYPE_FP16, DTYPE_FP8_E4M3 = 1, 2, 3

FAMILY_SM80, FAMILY_SM90, FAMILY_SM100 = 80, 90, 100

SCHED_PLAIN, SCHED_PERSISTENT, SCHED_LPT, SCHED_DYNAMIC = 0, 1, 2, 3

(SOURCE_USER_EXACT, SOURCE_SYSTEM_EXACT, SOURCE_NEAREST, SOURCE_SAME_ARCH,
 SOURCE_HEURISTIC, SOURCE_EXPLICIT, SOURCE_STALE) = range(1, 8)

# Every constant above under its C name, for the ABI test.
CONSTANTS = dict(
    FA4_DTYPE_BF16=DTYPE_BF16, FA4_DTYPE_FP16=DTYPE_FP16, FA4_DTYPE_FP8_E4M3=DTYPE_FP8_E4M3,
    FA4_FAMILY_SM80=FAMILY_SM80, FA4_FAMILY_SM90=FAMILY_SM90, FA4_FAMILY_SM100=FAMILY_SM100,
    FA4_SCHED_PLAIN=SCHED_PLAIN, FA4_SCHED_PERSISTENT=SCHED_PERSISTENT, FA4_SCHED_LPT=SCHED_LPT,
    FA4_SCHED_DYNAMIC=SCHED_DYNAMIC,
    FA4_SOURCE_USER_EXACT=SOURCE_USER_EXACT, FA4_SOURCE_SYSTEM_EXACT=SOURCE_SYSTEM_EXACT,
    FA4_SOURCE_NEAREST=SOURCE_NEAREST, FA4_SOURCE_SAME_ARCH=SOURCE_SAME_ARCH,
    FA4_SOURCE_HEURISTIC=SOURCE_HEURISTIC, FA4_SOURCE_EXPLICIT=SOURCE_EXPLICIT,
    FA4_SOURCE_STALE=SOURCE_STALE,
    **{name: code for code, name in STATUS_NAMES.items()})

# The header version this description matches (FA4_VERSION_STRING).
HEADER_VERSION = "0.1.0"

# ---------------------------------------------------------------- structs


class _Versioned(C.Structure):
    """A struct that starts with struct_size.  init() gives what the C _INIT macro
    gives: struct_size set, the _defaults_ filled in, everything else zero."""
    _defaults_ = {}

    @classmethod
    def init(cls, **fields):
        s = cls()
        s.struct_size = C.sizeof(cls)
        for name, value in cls._defaults_.items():
            setattr(s, name, value)
        for name, value in fields.items():
            setattr(s, name, value)
        return s


class ContextOptions(_Versioned):
    """fa4_context_options"""
    _fields_ = [
        ("struct_size", C.c_size_t),
        ("db_path", C.c_char_p),
        ("system_db_path", C.c_char_p),
        ("no_database", C.c_int),
        ("plan_only", C.c_int),
        ("arch", C.c_char_p),
        ("check_inputs", C.c_int),
        ("reserved", C.c_int),
        ("enable_sm100", C.c_int),
    ]


Strides = C.c_int64 * 3


class Problem(_Versioned):
    """fa4_problem"""
    _fields_ = [
        ("struct_size", C.c_size_t),
        ("dtype", C.c_int),
        ("batch", C.c_int),
        ("seqlen_q", C.c_int),
        ("seqlen_k", C.c_int),
        ("heads_q", C.c_int),
        ("heads_kv", C.c_int),
        ("head_dim_qk", C.c_int),
        ("head_dim_v", C.c_int),
        ("causal", C.c_int),
        ("window_left", C.c_int),
        ("window_right", C.c_int),
        ("softmax_scale", C.c_float),
        ("return_lse", C.c_int),
        ("q_strides", Strides),
        ("k_strides", Strides),
        ("v_strides", Strides),
        ("o_strides", Strides),
        ("varlen", C.c_int),
        ("page_size", C.c_int),
        ("attention_sinks", C.c_int),
        ("block_table_stride", C.c_int),
        ("num_pages", C.c_int),
        ("reserved", C.c_int),
        ("softcap", C.c_float),
        ("out_dtype", C.c_int),
        ("token_scales", C.c_int),
        ("reserved2", C.c_int),
    ]
    _defaults_ = {"dtype": DTYPE_BF16, "window_left": -1, "window_right": -1}


class Config(_Versioned):
    """fa4_config"""
    _fields_ = [("struct_size", C.c_size_t), ("family", C.c_int)] + [
        (name, C.c_int) for name in (
            "bm", "bn", "stages", "swizzle", "fused_kv", "q_tiles", "warps", "consumer_wgs",
            "producer_regs", "consumer_regs", "cluster", "exp2_emu_pct", "rescale_threshold",
            "pingpong", "scheduler", "splits", "pack_gqa", "kv_split_warps",
            "late_k_release", "tanh_poly_pct")]
    _defaults_ = {"family": FAMILY_SM80, "q_tiles": 1, "cluster": 1, "scheduler": SCHED_PLAIN,
                  "splits": 1, "tanh_poly_pct": -1}


class PlanOptions(_Versioned):
    """fa4_plan_options"""
    _fields_ = [
        ("struct_size", C.c_size_t),
        ("config", C.POINTER(Config)),
        ("allow_heuristic", C.c_int),
        ("no_binary_cache", C.c_int),
    ]
    _defaults_ = {"allow_heuristic": 1}


class Tensors(_Versioned):
    """fa4_tensors.  Pointers are plain integers (device addresses)."""
    _fields_ = [
        ("struct_size", C.c_size_t),
        ("q", C.c_void_p),
        ("k", C.c_void_p),
        ("v", C.c_void_p),
        ("o", C.c_void_p),
        ("lse", C.c_void_p),
        ("cu_seqlens_q", C.c_void_p),
        ("cu_seqlens_k", C.c_void_p),
        ("block_table", C.c_void_p),
        ("seqused_k", C.c_void_p),
        ("workspace", C.c_void_p),
        ("seqlen_q", C.c_int),
        ("seqlen_k", C.c_int),
        ("batch", C.c_int),
        ("sinks", C.c_void_p),
        ("q_descale", C.c_void_p),
        ("k_descale", C.c_void_p),
        ("v_descale", C.c_void_p),
        ("workspace_size", C.c_size_t),
        ("q_token_scale", C.c_void_p),
        ("k_token_scale", C.c_void_p),
    ]


def packer(cls):
    """A struct.Struct whose pack(*values) gives the bytes of the ctypes struct
    CLS with its fields set to VALUES, in field order (ints; 0 for a null
    pointer).  The offsets are ctypes' own, so they follow _fields_.  Packing
    a bytes object costs a fraction of building the ctypes struct field by
    field, and a new one per call is never shared between threads."""
    codes = {C.c_int: "i", C.c_size_t: "Q" if C.sizeof(C.c_size_t) == 8 else "I",
             C.c_void_p: "Q" if C.sizeof(C.c_void_p) == 8 else "I"}
    fmt, at = "=", 0
    for name, ctype in cls._fields_:
        offset = getattr(cls, name).offset
        fmt += "%dx" % (offset - at) if offset > at else ""
        fmt += codes[ctype]
        at = offset + C.sizeof(ctype)
    if C.sizeof(cls) > at:
        fmt += "%dx" % (C.sizeof(cls) - at)
    s = struct.Struct(fmt)
    assert s.size == C.sizeof(cls), (cls.__name__, fmt)
    return s


# fa4_tensors as bytes: fa4_forward's launch path passes one (ctypes hands
# C a pointer to a bytes object's buffer, 8-byte aligned in CPython).
TENSORS_PACK = packer(Tensors)

# C type name -> ctypes class, for the ABI test.
STRUCTS = {
    "fa4_context_options": ContextOptions,
    "fa4_problem": Problem,
    "fa4_config": Config,
    "fa4_plan_options": PlanOptions,
    "fa4_tensors": Tensors,
}

# ------------------------------------------------------------- functions

_p = C.POINTER
# Opaque handles (fa4_context *, fa4_plan *) and streams travel as void pointers.
FUNCTIONS = {
    "fa4_version": (C.c_char_p, []),
    "fa4_status_string": (C.c_char_p, [C.c_int]),
    "fa4_context_create": (C.c_int, [_p(C.c_void_p), C.c_int, _p(ContextOptions)]),
    "fa4_context_destroy": (None, [C.c_void_p]),
    "fa4_context_errmsg": (C.c_char_p, [C.c_void_p]),
    "fa4_context_last_error": (C.c_char_p, []),
    "fa4_context_warnings": (C.c_char_p, [C.c_void_p]),
    "fa4_problem_check": (C.c_int, [_p(Problem), C.c_char_p, C.c_size_t]),
    "fa4_config_format": (C.c_char_p, [_p(Config), C.c_char_p, C.c_size_t]),
    "fa4_config_source_string": (C.c_char_p, [C.c_int]),
    "fa4_plan_create": (C.c_int, [_p(C.c_void_p), C.c_void_p, _p(Problem), _p(PlanOptions)]),
    "fa4_plan_destroy": (None, [C.c_void_p]),
    "fa4_plan_config": (C.c_int, [C.c_void_p, _p(Config), _p(C.c_int)]),
    "fa4_plan_workspace_size": (C.c_int, [C.c_void_p, _p(C.c_size_t)]),
    # The launch path: the tensors struct is passed by address (an int) rather
    # than through byref(), which costs a conversion on every call.
    "fa4_forward": (C.c_int, [C.c_void_p, C.c_void_p, C.c_void_p]),
}


def declare(lib):
    """Set restype and argtypes of every function of FUNCTIONS on the CDLL LIB."""
    for name, (restype, argtypes) in FUNCTIONS.items():
        fn = getattr(lib, name)
        fn.restype = restype
        fn.argtypes = argtypes
    return lib
