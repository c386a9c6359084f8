"""Fields: views of the library's memory, arrays in place or copied once,
lifetimes, the DLPack export, errors."""
import ctypes as C
import gc
import weakref

import numpy as np
import pytest

import strata
from strata import _lib


def test_struct_mirrors_match_the_library():
    for name, cls in _lib.MIRRORS.items():
        assert _lib.lib.strata_abi_sizeof(name.encode()) == C.sizeof(cls), name


def test_interior_and_ghosted_views_share_the_field(cpu):
    f = strata.Field((3, 4, 5), np.float32, ghost=2, context=cpu)
    assert f.shape == (3, 4, 5) and f.n == (5, 4, 3)
    a, g = f.interior, f.ghosted
    assert a.shape == (3, 4, 5) and g.shape == (7, 8, 9)
    assert np.shares_memory(a, g)
    assert a.ctypes.data == f.interior_ptr
    f.fill_random(seed=5, lo=-1, hi=1)
    # the views see the library's writes, the library sees the views'
    assert np.array_equal(a, f.read())
    assert np.array_equal(g, f.read(ghosted=True))
    a[1, 2, 3] = 42.0
    assert f.read()[1, 2, 3] == 42.0
    assert g[3, 4, 5] == 42.0     # the same point, ghosts counted
    g[0, 0, 0] = 7.0              # a ghost corner
    assert f.read(ghosted=True)[0, 0, 0] == 7.0


def test_write_read_and_fills(cpu):
    f = strata.Field((6, 7), context=cpu)
    x = np.arange(42.0).reshape(6, 7)
    f.write(x)
    assert np.array_equal(f.interior, x)
    assert f.norm("sum") == x.sum() and f.norm("max") == 41.0
    f.fill_ghosts("periodic")
    assert f.ghosted[0, 1] == x[-1, 0]
    f.fill_ghosts({"all": "dirichlet", "x": 3.0})
    assert f.ghosted[1, 0] == 3.0 and f.ghosted[0, 1] == 0.0
    with pytest.raises(strata.InvalidArgument):
        f.write(np.zeros((7, 6)))


def test_view_keeps_field_alive(cpu):
    f = strata.Field((16, 16), context=cpu)
    f.fill(2.5)
    ref = weakref.ref(f)
    v = f.interior
    del f
    gc.collect()
    assert ref() is not None          # the view holds it
    assert np.all(v == 2.5)
    v[...] = 1.0                      # still valid memory
    del v
    gc.collect()
    assert ref() is None              # released with its last view


def test_array_in_place_and_kept_alive(cpu):
    a = strata.zeros((5, 6, 7), np.float64, ghost=2)
    a[...] = np.random.default_rng(1).random(a.shape)
    f = strata.Field.from_array(a, ghost=2, context=cpu, copy=False)
    assert f.interior_ptr == a.ctypes.data
    assert np.shares_memory(f.interior, a)
    f.fill(3.0)                       # written through strata ...
    assert np.all(a == 3.0)           # ... seen by the caller's array
    wa = a.base
    while isinstance(wa.base, np.ndarray):
        wa = wa.base
    keep = f.interior
    del a, wa
    gc.collect()
    assert np.all(keep == 3.0)        # the field keeps the array alive
    f.fill(4.0)
    assert np.all(keep == 4.0)


def test_array_not_in_strata_layout_is_copied_once(cpu):
    a = np.arange(60.0).reshape(3, 4, 5)
    f = strata.Field.from_array(a, context=cpu)
    assert not np.shares_memory(f.interior, a)
    assert np.array_equal(f.interior, a)
    with pytest.raises(strata.InvalidArgument, match="strides"):
        strata.Field.from_array(a, context=cpu, copy=False)
    # a strided view and another dtype: copied, values kept
    b = np.arange(120.0).reshape(4, 5, 6)[::2, :, 1:]
    assert np.array_equal(strata.Field.from_array(b, context=cpu).interior, b)
    c = np.arange(12, dtype=np.int32).reshape(3, 4)
    fc = strata.Field.from_array(c, context=cpu)
    assert fc.dtype == np.float64 and np.array_equal(fc.interior, c)
    # strata's layout for ghost 2 is not for ghost 1's rows: copied
    d = strata.zeros((3, 4, 5), ghost=2)
    assert not np.shares_memory(
        strata.Field.from_array(d, ghost=3, context=cpu).interior, d)


def test_dlpack_export_to_numpy(cpu):
    f = strata.Field((4, 5, 6), np.float32, context=cpu)
    f.fill_random(9)
    assert f.__dlpack_device__() == (1, 0)
    x = np.from_dlpack(f)
    assert np.shares_memory(x, f.interior)
    assert np.array_equal(x, f.read())
    ref = weakref.ref(f)
    del f
    gc.collect()
    assert ref() is not None          # the consumer's tensor holds it
    del x
    gc.collect()
    assert ref() is None
    # a capsule never consumed releases the field too
    g = strata.Field((3,), context=cpu)
    r2 = weakref.ref(g)
    cap = g.__dlpack__()
    del g, cap
    gc.collect()
    assert r2() is None


def test_no_cuda_interface_on_the_cpu(cpu):
    f = strata.Field((4, 4), context=cpu)
    assert not hasattr(f, "__cuda_array_interface__")


def test_errors_carry_message_and_argument(cpu):
    with pytest.raises(strata.InvalidArgument) as e:
        strata.Field((4, 4), ghost=0, context=cpu)
    assert e.value.arg == "ghost" and e.value.value == "0"
    assert "ghost width is 0" in e.value.message
    assert e.value.status == "STRATA_EINVAL"
    with pytest.raises(strata.InvalidArgument) as e:
        strata.Field((4, 4), ghost=9, context=cpu)
    assert e.value.arg == "ghost" and "1..8" in e.value.message
    with pytest.raises(strata.InvalidArgument) as e:
        strata.Field((4, 0), context=cpu)
    assert e.value.arg == "n[0]"
    with pytest.raises(strata.InvalidArgument) as e:
        strata.Field((4, 4), dtype=np.int32, context=cpu)
    assert e.value.arg == "precision"
    with pytest.raises(strata.InvalidArgument) as e:
        strata.Context("gpu")
    assert e.value.arg == "backend"
    with pytest.raises(strata.OutOfMemory) as e:
        strata.Field((1 << 41, 2), context=cpu)
    assert e.value.arg == "n[1]" or e.value.arg.startswith("n")
    with pytest.raises(strata.InvalidArgument) as e:
        strata.Field((4, 4), context=cpu).fill_ghosts(
            {"xlo": "periodic", "xhi": "dirichlet"})
    assert "periodic" in e.value.message
    with pytest.raises(strata.InvalidArgument) as e:
        strata.Field((4, 4), context=cpu).fill_ghosts("mirror")
    assert e.value.arg == "bc.kind[0]"


def test_cuda_backend_refused_cleanly_without_gpu():
    ok, why = strata.backend_available("cuda")
    if ok:
        pytest.skip("a GPU is present")
    with pytest.raises(strata.NotSupported) as e:
        strata.Context("cuda")
    assert e.value.status == "STRATA_ENOBACKEND" and e.value.message
    assert e.value.arg == "backend"


class DLPackOnly:
    """An array that offers nothing but the DLPack protocol (as JAX or
    TensorFlow arrays do)."""

    def __init__(self, a):
        self.a = a

    def __dlpack__(self, stream=None):
        return self.a.__dlpack__()

    def __dlpack_device__(self):
        return self.a.__dlpack_device__()


def test_dlpack_producers_are_read(cpu):
    a = np.random.default_rng(5).random((4, 6, 8))
    f = strata.Field.from_array(DLPackOnly(a), context=cpu)
    assert np.array_equal(f.read(), a)
    assert not np.shares_memory(f.interior, a)  # its allocation is unknown
    b = np.arange(24, dtype=np.float32).reshape(4, 6)[:, ::2]
    g = strata.Field.from_array(DLPackOnly(b), context=cpu)
    assert g.dtype == np.float32 and np.array_equal(g.read(), b)
    h = strata.Field.from_array(DLPackOnly(np.arange(4)), context=cpu)
    assert h.dtype == np.float64 and np.array_equal(h.read(), [0, 1, 2, 3])
    with pytest.raises(TypeError, match="strata takes float32"):
        strata.Field.from_array(DLPackOnly(np.ones(4, np.float16)),
                                context=cpu)


def test_asarray_and_repr(cpu):
    f = strata.Field((3, 4), context=cpu).fill(1.5)
    x = np.asarray(f)
    assert np.shares_memory(x, f.interior) and x.sum() == 18.0
    assert "shape=(3, 4)" in repr(f)
