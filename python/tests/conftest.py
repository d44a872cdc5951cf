"""What the Python suites share: `cp`, CuPy where a GPU and the library's CUDA backend are
there, else the test is skipped."""
import pytest

import tilegemm


@pytest.fixture
def cp():
    cupy = pytest.importorskip("cupy")
    try:
        if cupy.cuda.runtime.getDeviceCount() == 0:
            pytest.skip("no GPU")
    except cupy.cuda.runtime.CUDARuntimeError:
        pytest.skip("no GPU")
    if not tilegemm.backend_available("cuda"):
        pytest.skip("this libtilegemm has no CUDA backend")
    return cupy
