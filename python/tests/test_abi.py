"""The ctypes description of the C API (fa4/_abi.py) against the header: the
compiler's layout of every public struct (tests/abi_dump.c), the _INIT macros'
values, the enums, and the header's own text (new fields, enum values and
functions).  Needs no GPU and no PyTorch."""
import ctypes as C
import os
import re

import _util
from fa4 import _abi


def _dump_lines(kind):
    return [line.split()[1:] for line in _util.abi_dump().splitlines() if line.split()[:1] == [kind]]


def _ctype_fields(cls):
    return [name for name, _ in cls._fields_]


def test_struct_sizes():
    structs = {name: (int(size), int(align)) for name, size, align in _dump_lines("struct")}
    assert set(structs) == set(_abi.STRUCTS), "structs: C %s, Python %s" % (sorted(structs), sorted(_abi.STRUCTS))
    for name, (size, align) in structs.items():
        cls = _abi.STRUCTS[name]
        assert C.sizeof(cls) == size, "sizeof(%s): C %d, ctypes %d" % (name, size, C.sizeof(cls))
        assert C.alignment(cls) == align, "alignof(%s): C %d, ctypes %d" % (name, align, C.alignment(cls))


def test_field_offsets_and_sizes():
    fields = {}
    for struct, field, offset, size in _dump_lines("field"):
        fields.setdefault(struct, []).append((field, int(offset), int(size)))
    for struct, expected in fields.items():
        cls = _abi.STRUCTS[struct]
        assert _ctype_fields(cls) == [f for f, _, _ in expected], \
            "%s fields: C %s, ctypes %s" % (struct, [f for f, _, _ in expected], _ctype_fields(cls))
        for field, offset, size in expected:
            desc = getattr(cls, field)
            assert (desc.offset, desc.size) == (offset, size), "%s.%s: C offset %d size %d, ctypes %d %d" % (
                struct, field, offset, size, desc.offset, desc.size)


def _python_value(struct, field):
    value = getattr(_abi.STRUCTS[struct].init(), field)
    if isinstance(value, C.Array):
        return [int(x) for x in value]
    if isinstance(value, float):
        return value
    if value is None or isinstance(value, (bytes, C._Pointer)):
        return int(bool(value))
    return int(value)


def test_init_macros():
    for line in _dump_lines("init"):
        struct, field, values = line[0], line[1], line[2:]
        got = _python_value(struct, field)
        if isinstance(got, list):
            assert got == [int(v) for v in values], "%s.%s: C %s, Python %s" % (struct, field, values, got)
        elif isinstance(got, float):
            assert got == float(values[0]), "%s.%s: C %s, Python %s" % (struct, field, values[0], got)
        else:
            assert got == int(values[0]), "%s.%s: C %s, Python %s" % (struct, field, values[0], got)


def test_constants_and_enum_sizes():
    consts = {name: int(v) for name, v in _dump_lines("const") if not name.startswith("FA4_VERSION_")}
    assert consts == _abi.CONSTANTS, "constants differ: C-only %s, Python-only %s, values %s" % (
        sorted(set(consts) - set(_abi.CONSTANTS)), sorted(set(_abi.CONSTANTS) - set(consts)),
        {k: (consts[k], _abi.CONSTANTS[k]) for k in set(consts) & set(_abi.CONSTANTS)
         if consts[k] != _abi.CONSTANTS[k]})
    for name, size in _dump_lines("enumsize"):
        want = C.sizeof(C.c_void_p) if name == "fa4_stream" else C.sizeof(C.c_int)
        assert int(size) == want, "sizeof(%s) = %s: the binding passes it as %d bytes" % (name, size, want)


def _strip_comments(text):
    return re.sub(r"/\*.*?\*/", " ", text, flags=re.S)


def test_header_struct_fields():
    """Field names in the header's text: an added field hidden by padding (same
    sizeof) still shows here."""
    text = _strip_comments(_util.header_text())
    found = {}
    for name, body in re.findall(r"typedef struct (fa4_\w+) \{(.*?)\}", text, flags=re.S):
        decls = [d.strip() for d in body.split(";") if d.strip()]
        found[name] = [re.match(r".*?(\w+)\s*(\[\d+\])?$", d, flags=re.S).group(1) for d in decls]
    assert set(found) == set(_abi.STRUCTS), "public structs: header %s, Python %s" % (
        sorted(found), sorted(_abi.STRUCTS))
    for name, fields in found.items():
        assert fields == _ctype_fields(_abi.STRUCTS[name]), "%s: header %s, ctypes %s" % (
            name, fields, _ctype_fields(_abi.STRUCTS[name]))


def test_header_enum_values():
    text = _strip_comments(_util.header_text())
    values = {name: int(v) for name, v in re.findall(r"\b(FA4_[A-Z0-9_]+)\s*=\s*(-?\d+)", text)}
    assert values == _abi.CONSTANTS, "enum values: header-only %s, Python-only %s" % (
        sorted(set(values) - set(_abi.CONSTANTS)), sorted(set(_abi.CONSTANTS) - set(values)))


def test_header_functions():
    """Every function fa4.h declares has a prototype with as many arguments."""
    text = _strip_comments(_util.header_text())
    decls = dict(re.findall(r"^[a-z][a-z0-9_ ]*[ *](fa4_[a-z0-9_]*)\(([^)]*)\)", text, flags=re.M))
    assert set(decls) == set(_abi.FUNCTIONS), "functions: header-only %s, Python-only %s" % (
        sorted(set(decls) - set(_abi.FUNCTIONS)), sorted(set(_abi.FUNCTIONS) - set(decls)))
    for name, params in decls.items():
        n = 0 if params.strip() in ("", "void") else params.count(",") + 1
        assert n == len(_abi.FUNCTIONS[name][1]), "%s: %d parameters in fa4.h, %d in _abi" % (
            name, n, len(_abi.FUNCTIONS[name][1]))


def test_versions_agree():
    """FA4_VERSION_STRING, the binding's HEADER_VERSION and python/pyproject.toml."""
    dumped = [v for (v,) in _dump_lines("version")]
    assert dumped == [_abi.HEADER_VERSION], "fa4.h is %s, _abi.HEADER_VERSION %s" % (dumped, _abi.HEADER_VERSION)
    with open(os.path.join(_util.PYDIR, "pyproject.toml")) as f:
        m = re.search(r'^version\s*=\s*"([^"]+)"', f.read(), flags=re.M)
    assert m and m.group(1) == _abi.HEADER_VERSION, "pyproject.toml version %s" % (m and m.group(1))


def test_tensors_pack():
    """The bytes fa4_forward gets (_abi.TENSORS_PACK, made from the ctypes
    fields) read back as the same fa4_tensors."""
    s = _abi.TENSORS_PACK
    assert s.size == C.sizeof(_abi.Tensors), (s.format, s.size)
    values = [1000 + i for i in range(len(_abi.Tensors._fields_))]
    t = _abi.Tensors.from_buffer_copy(s.pack(*values))
    assert [getattr(t, name) for name, _ in _abi.Tensors._fields_] == values, s.format
