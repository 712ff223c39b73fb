"""Units read from column names and numbers written with them (experiments/units.py): exact
strings for the cases a report shows (issue 43 item 6: "5646000000 pJ" must read 5.646 mJ)."""

from __future__ import annotations

import math

import pytest

from experiments.units import axis_ticks, format_value, unit_of


@pytest.mark.parametrize(("name", "value", "text"), [
    ("energy_pj", 5646000000, "5.646 mJ"),
    ("metrics_energy_uj", 0.0123, "12.3 nJ"),
    ("energy_uj", 999.99, "1 mJ"),          # rounds up into the next prefix, not "1000 uJ"
    ("latency_ms", 0.5, "500 \u00b5s"),
    ("latency_cycles", 5.646e9, "5.646G cycles"),
    ("latency_cycles", 1234, "1234 cycles"),
    ("area_mm2", 3.14159, "3.142 mm\u00b2"),
    ("utilization", 0.8765, "87.6 %"),
    ("edp_uj_ms", 123456.7, "123500 \u00b5J\u00b7ms"),
    ("edp_uj_ms", 1.23456e7, "1.235e7 \u00b5J\u00b7ms"),
    ("power_mw", 1500, "1.5 W"),
    ("params_glb_kib", 256, "256 KiB"),
    ("rows", 64, "64"),
    ("rows", 0.000123456, "0.0001235"),
    ("energy_uj", math.inf, "n/a"),
    ("energy_uj", 0, "0 \u00b5J"),
    ("dataflow", "WS", "WS"),
])
def test_format_value(name, value, text):
    assert format_value(value, unit_of(name)) == text


def test_unit_of_reads_the_longest_suffix():
    assert unit_of("edp_uj_ms").symbol == "\u00b5J\u00b7ms"      # not "ms"
    assert unit_of("energy_uj").base == "J" and unit_of("energy_uj").scale == 1e-6
    assert unit_of("rows") is None and unit_of("ms") is None    # a bare suffix is no unit
    assert unit_of("macs").kind == "count"


def test_axis_ticks():
    assert axis_ticks([3, 900, 40], True, unit_of("energy_uj")) == (
        [5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0],
        ["5 \u00b5J", "10 \u00b5J", "20 \u00b5J", "50 \u00b5J", "100 \u00b5J", "200 \u00b5J", "500 \u00b5J"])
    vals, text = axis_ticks([3, 9e9], True, unit_of("energy_pj"))  # past six decades: decades only
    assert vals == [10.0**e for e in range(1, 10)] and text[2] == "1 nJ" and text[-1] == "1 mJ"
    assert axis_ticks([0.13, 0.87], False, unit_of("utilization")) == ([0.2, 0.4, 0.6, 0.8],
                                                                         ["20 %", "40 %", "60 %", "80 %"])
    assert axis_ticks([], True) == ([], []) and axis_ticks([-1.0], True) == ([], [])
