"""On a GPU: CuPy arrays and PyTorch tensors in and out without copies
(device pointers compared), results equal to the CPU engine's within the
stated bounds, and the stream behaviour.  Skipped without a GPU, CuPy or
PyTorch (the fixtures say which)."""
import numpy as np
import pytest

import strata


def op_bound(s, a, dtype):
    """|gpu - cpu| bound of one application: each point sums s.points
    products, rounded in dtype (the engines may order and fuse them
    differently): 2 * points * eps * sum|w| * max|u|."""
    from test_ops import weights
    eps = np.finfo(dtype).eps
    return 2 * s.points * eps * sum(abs(w) for w in weights(s).values()) * \
        float(np.max(np.abs(a)))


def test_field_exports_its_device_pointer(gpu, cupy):
    f = strata.Field((8, 9, 10), np.float32, ghost=2, context=gpu)
    f.fill_random(4)
    c = cupy.asarray(f)
    assert c.data.ptr == f.interior_ptr          # no copy
    assert c.shape == (8, 9, 10) and c.strides == f.strides
    assert np.array_equal(cupy.asnumpy(c), f.read())
    c[1, 2, 3] = 5.0                              # written through CuPy ...
    cupy.cuda.get_current_stream().synchronize()
    assert f.read()[1, 2, 3] == 5.0               # ... seen by strata
    assert f.__dlpack_device__() == (2, gpu.device)
    d = cupy.from_dlpack(f)
    assert d.data.ptr == f.interior_ptr


def test_torch_from_dlpack_shares_the_field(gpu, torch):
    f = strata.Field((16, 12), np.float64, context=gpu)
    f.fill_random(1)
    t = torch.from_dlpack(f)
    assert t.data_ptr() == f.interior_ptr and t.is_cuda
    assert np.array_equal(t.cpu().numpy(), f.read())
    del f                                          # t keeps it alive
    import gc
    gc.collect()
    t += 1.0
    torch.cuda.synchronize()
    assert t.min().item() >= 1.0


def test_cupy_array_used_in_place(gpu, cupy):
    a = strata.zeros((6, 7, 8), np.float32, ghost=4, like="cupy")
    a[...] = cupy.random.random(a.shape, dtype=cupy.float32)
    f = strata.Field.from_array(a, ghost=4, context=gpu, copy=False)
    assert f.interior_ptr == a.data.ptr
    f.fill(2.0)
    assert float(a.max()) == 2.0 and float(a.min()) == 2.0
    # another layout: copied once on the device
    b = cupy.arange(336, dtype=cupy.float64).reshape(6, 7, 8)
    g = strata.Field.from_array(b, context=gpu)
    assert g.interior_ptr != b.data.ptr
    assert np.array_equal(g.read(), cupy.asnumpy(b))
    with pytest.raises(strata.InvalidArgument):
        strata.Field.from_array(b, context=gpu, copy=False)


def test_torch_tensor_used_in_place(gpu, torch):
    a = strata.zeros((5, 6, 7), np.float64, ghost=1, like="torch")
    a.copy_(torch.rand(a.shape, dtype=torch.float64, device="cuda"))
    f = strata.Field.from_array(a, context=gpu, copy=False)
    assert f.interior_ptr == a.data_ptr()
    f.fill(3.0)
    assert a.min().item() == 3.0


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("order", [2, 8])
def test_apply_on_cupy_equals_cpu(gpu, cupy, cpu, dtype, order):
    s = strata.laplacian(order=order, h=0.5, dims=3)
    host = np.random.default_rng(order).uniform(-1, 1, (20, 24, 28)).astype(dtype)
    a = strata.empty(host.shape, dtype, ghost=s.radius, like="cupy")
    a[...] = cupy.asarray(host)
    out = strata.apply(s, a, bc=0.0, context=gpu)
    assert isinstance(out, cupy.ndarray)
    ref = strata.apply(s, host, bc=0.0, context=cpu)
    d = np.max(np.abs(cupy.asnumpy(out).astype(np.float64) - ref))
    assert d <= op_bound(s, host, dtype)
    # into a CuPy out array of strata's layout: in place
    o = strata.zeros(host.shape, dtype, ghost=s.radius, like="cupy")
    assert strata.apply(s, a, out=o, bc=0.0, context=gpu) is o
    assert cupy.array_equal(o, out)


def test_apply_waits_for_the_callers_stream(gpu, cupy, cpu):
    s = strata.laplacian(order=4, h=1.0, dims=3)
    host = np.random.default_rng(3).random((64, 64, 64))
    a = strata.zeros(host.shape, np.float64, ghost=2, like="cupy")
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        # queued on the caller's stream, not yet done when apply starts
        for _ in range(20):
            a[...] = cupy.asarray(host) * 1.0
        out = strata.apply(s, a, bc=0.0, context=gpu)
        # the result is complete when apply returns: read on this stream
        got = cupy.asnumpy(out)
    ref = strata.apply(s, host, bc=0.0, context=cpu)
    assert np.max(np.abs(got - ref)) <= op_bound(s, host, np.float64)


def test_wave_on_gpu_equals_cpu_and_hands_out_cupy(gpu, cupy, cpu):
    kw = dict(n=(48, 40, 36), h=10.0, velocity=2000.0, f0=12.0,
              absorb_width=6, receivers=[[120.0, 200.0, 60.0]])
    g = strata.Wave(context=gpu, **kw)
    c = strata.Wave(context=cpu, **kw)
    g.step(80)
    c.step(80)
    p = g.array("p", like="cupy")
    assert p.data.ptr == g.field("p").interior_ptr
    ref = c.read("p")
    # fp32, 80 steps: the engines differ by rounding only
    assert np.max(np.abs(cupy.asnumpy(p) - ref)) <= 1e-4 * np.max(np.abs(ref))
    tg, tc = g.traces().data, c.traces().data
    assert np.max(np.abs(tg - tc)) <= 1e-4 * np.max(np.abs(tc))
    t = g.array("p", like="torch") if _has_torch() else None
    if t is not None:
        assert t.data_ptr() == p.data.ptr


def test_wave_driven_with_a_cupy_velocity_model(gpu, cupy):
    v = cupy.full((36, 40, 48), 2000.0)
    v[18:] = 2600.0
    w = strata.Wave(context=gpu, n=(48, 40, 36), h=10.0,
                    velocity=v, absorb_width=6)
    w.step(20)
    assert cupy.isfinite(w.array("p", like="cupy")).all()


def _has_torch():
    try:
        import torch
        return torch.cuda.is_available()
    except ImportError:
        return False
