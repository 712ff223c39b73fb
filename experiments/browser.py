"""Headless Chromium for looking at the explorer as a person would (tests, screenshots).

Drives Debian's ``chromium`` through its ``chromedriver`` (packages ``chromium`` and
``chromium-driver``) with selenium; nothing is downloaded at run time. Chromium is started
with the flags that keep it off the network (the machines it runs on have none, and
without them it waits on lookups), a fresh profile in a temporary folder, and software
WebGL (the parallel-coordinates chart is WebGL).

::

    python -m experiments.browser report.html docs/img/report.png [--width 1400 --height 2200]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

CHROMIUM_FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--enable-unsafe-swiftshader",  # WebGL on the CPU, for plotly's parcoords
    "--disable-dev-shm-usage",
)
INSTALL_HINT = "apt-get install -y chromium chromium-driver (Debian packages)"


def find_chromium() -> tuple[str, str] | None:
    """``(chromium, chromedriver)`` paths, or None when either is missing.
    ``$COEXPLORE_CHROMIUM`` / ``$COEXPLORE_CHROMEDRIVER`` override the lookup."""
    browser = os.environ.get("COEXPLORE_CHROMIUM") or shutil.which("chromium") or \
        shutil.which("chromium-browser")
    driver = os.environ.get("COEXPLORE_CHROMEDRIVER") or shutil.which("chromedriver")
    if not browser or not driver or not Path(browser).exists() or not Path(driver).exists():
        return None
    return browser, driver


def missing_reason() -> str | None:
    """Why a browser session cannot start here (None when it can)."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install -e '.[dev]')"
    if find_chromium() is None:
        return f"headless Chromium and chromedriver not found: {INSTALL_HINT}"
    return None


@contextlib.contextmanager
def chromium(width: int = 1400, height: int = 1000) -> Iterator[Any]:
    """A selenium ``WebDriver`` on headless Chromium, quit (and its profile removed) after."""
    reason = missing_reason()
    if reason:
        raise RuntimeError(reason)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    browser, driver_path = find_chromium()  # type: ignore[misc]
    profile = tempfile.mkdtemp(prefix="coexplore-chromium-")
    opts = webdriver.ChromeOptions()
    opts.binary_location = browser
    for flag in CHROMIUM_FLAGS:
        opts.add_argument(flag)
    opts.add_argument(f"--user-data-dir={profile}")
    opts.add_argument(f"--window-size={width},{height}")
    drv = webdriver.Chrome(service=Service(executable_path=driver_path), options=opts)
    try:
        drv.set_page_load_timeout(60)
        yield drv
    finally:
        with contextlib.suppress(Exception):
            drv.quit()
        shutil.rmtree(profile, ignore_errors=True)


def wait_for(drv: Any, script: str, timeout: float = 30.0, what: str = "") -> Any:
    """Poll ``script`` (a JavaScript expression's body, ``return ...``) until it returns
    something truthy; its value. TimeoutError naming ``what`` otherwise."""
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.support.ui import WebDriverWait

    try:
        return WebDriverWait(drv, timeout, poll_frequency=0.2).until(
            lambda d: d.execute_script(script))
    except TimeoutException:
        raise TimeoutError(f"the page never showed {what or script!r} within {timeout} s") from None


def rendered(drv: Any) -> None:
    """Wait until the explorer page rendered a view (its ``window.coexplore`` probe)."""
    wait_for(drv, "return window.coexplore && window.coexplore.renders > 0", 60, "a rendered view")


def screenshot(page: str | Path, out: str | Path, width: int = 1400, height: int = 2200,
               select: int | None = None) -> Path:
    """Open ``page`` (a report file or a URL), select a design (the first highlighted one,
    or trial ``select``) and save a PNG of the window."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    url = page if str(page).startswith(("http://", "https://", "file://")) else \
        Path(page).resolve().as_uri()
    with chromium(width, height) as drv:
        drv.get(url)
        rendered(drv)
        if select is not None:
            drv.execute_script(f"document.querySelector('tr[data-number=\"{int(select)}\"]').click()")
        wait_for(drv, "return window.coexplore.detailRenders > 0", 30, "the selected design")
        drv.save_screenshot(str(out))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("page", help="report.html or a dashboard URL")
    ap.add_argument("out", help="PNG to write")
    ap.add_argument("--width", type=int, default=1400)
    ap.add_argument("--height", type=int, default=2200)
    ap.add_argument("--select", type=int, default=None, help="trial number to select")
    a = ap.parse_args(argv)
    try:
        print(screenshot(a.page, a.out, a.width, a.height, a.select))
    except (RuntimeError, TimeoutError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
