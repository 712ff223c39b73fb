"""YAML loading under hostile input: alias bombs, cycles, depth, size, bad bytes.

Each case must end in one :class:`ConfigError` naming the file and, where there is one,
the line -- fast (CPU seconds, ``time.process_time``) and without building the
expansion -- while ordinary documents (anchors, merge keys, tags) read as
``yaml.safe_load`` reads them.
"""

from __future__ import annotations

import time

import pytest
import yaml

from design_space import yamlio
from design_space.errors import ConfigError
from design_space.yamlio import load_yaml, load_yaml_file


def _laughs(levels: int, width: int = 9) -> str:
    lines = [f"a0: &a0 [{', '.join(['lol'] * width)}]"]
    for i in range(1, levels + 1):
        lines.append(f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * width)}]")
    return "\n".join(lines) + "\n"


def test_billion_laughs_is_refused_fast_with_file_and_line(tmp_path):
    text = _laughs(9)                     # 9**10 ~ 3.5e9 leaves if expanded; ~500 bytes
    assert len(text) < 1000
    p = tmp_path / "bomb.yaml"
    p.write_text(text)
    t0 = time.process_time()
    with pytest.raises(ConfigError, match="expands to more than 1000000 nodes") as e:
        load_yaml_file(p)
    assert time.process_time() - t0 < 1.0
    # 9**6 = 531441 leaves at level 5 fit; level 6 (4.8e6) is where the count passes 1e6
    assert e.value.line == 7
    assert str(e.value).startswith(f"{p}:7: ")


def test_expansion_count_is_exact():
    # root map, key a, [1, 2] (3 nodes), key b, [*x, *x] (1 + 3 + 3): 13 nodes
    text = "a: &x [1, 2]\nb: [*x, *x]\n"
    assert load_yaml(text, max_nodes=13)[0] == {"a": [1, 2], "b": [[1, 2], [1, 2]]}
    with pytest.raises(ConfigError, match="more than 12 nodes"):
        load_yaml(text, max_nodes=12)


@pytest.mark.parametrize("text, line", [
    ("a: 1\nb: &x\n  - 2\n  - *x\n", 4),          # a sequence that contains itself
    ("a: &m\n  k: 1\n  self: *m\n", 3),           # a mapping that contains itself
    ("x: &o [1, {deep: [*o]}]\n", 1),              # through two levels
])
def test_cycles_are_refused_with_the_line_of_the_alias(text, line):
    with pytest.raises(ConfigError, match="inside the collection it names") as e:
        load_yaml(text, "c.yaml")
    assert e.value.line == line
    assert e.value.source == "c.yaml"


def test_depth_limit_is_exact_and_needs_no_recursion():
    assert load_yaml("[" * 100 + "]" * 100)[0] is not None
    with pytest.raises(ConfigError, match="nested deeper than 100 levels"):
        load_yaml("[" * 101 + "]" * 101)
    # far deeper than Python's recursion limit: still one ConfigError, not RecursionError
    t0 = time.process_time()
    with pytest.raises(ConfigError, match="nested deeper"):
        load_yaml("[" * 200_000 + "]" * 200_000)
    assert time.process_time() - t0 < 2.0


def test_size_limit(tmp_path, monkeypatch):
    monkeypatch.setattr(yamlio, "MAX_CONFIG_BYTES", 100)
    p = tmp_path / "big.yaml"
    p.write_text("a: " + "x" * 98)            # 101 bytes
    with pytest.raises(ConfigError, match="larger than 100 bytes") as e:
        load_yaml_file(p)
    assert str(p) in str(e.value)
    p.write_text("a: " + "x" * 97)            # 100 bytes: fine
    assert load_yaml_file(p)[0] == {"a": "x" * 97}
    with pytest.raises(ConfigError, match="more than a config may have"):
        load_yaml("a: " + "x" * 98)


def test_the_c_loader_parses_the_text_once(monkeypatch):
    if yaml.__with_libyaml__:
        assert issubclass(yamlio.SafeLoader, yaml.CSafeLoader)
    made = []
    real_init = yamlio.SafeLoader.__init__

    def counting(self, stream):
        made.append(stream)
        real_init(self, stream)

    monkeypatch.setattr(yamlio.SafeLoader, "__init__", counting)
    for name in ("safe_load", "load", "compose", "compose_all", "load_all"):
        monkeypatch.setattr(yaml, name, lambda *a, **k: pytest.fail("a second parse"))
    data, lm = load_yaml("p:\n  - {name: a, low: 1}\n")
    assert data == {"p": [{"name": "a", "low": 1}]}
    assert lm.line(("p", 0, "low")) == 2
    assert len(made) == 1


ORDINARY = [
    "a: &x {k: 1, l: [1, 2.5, null, true, '3']}\nb: *x\nc: {<<: *x, k: 2}\n",
    "- !!str 12\n- !!float 3\n- 2001-12-14\n- ~\n- [a, {b: c}]\n- 0x1f\n- 1_000\n",
    "base: &b {x: 1}\nmore: &m {y: 2}\nboth: {<<: [*b, *m], z: 3}\n",
    "k: |\n  line one\n  line two\n'q': \"esc\\n\"\n? [complex, key]\n: hmm\n",
    "",
    "# only a comment\n",
    "--- plain scalar\n",
]


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_documents_read_as_safe_load_reads_them(text):
    try:
        expected = yaml.safe_load(text)
    except yaml.YAMLError:
        with pytest.raises(ConfigError):
            load_yaml(text)
        return
    assert load_yaml(text)[0] == expected


def test_aliased_subtrees_are_walked_once_and_lines_fall_back_to_the_alias():
    text = "a: &x\n  k: 1\nb: *x\n"
    _, lm = load_yaml(text)
    assert lm.line(("a", "k")) == 2
    assert lm.line(("b", "k")) == 3            # the alias's own line


@pytest.mark.parametrize("text, message, line", [
    ("a: *nope\n", "undefined alias", 1),
    ("a: &x 1\nb: &x 2\n", "duplicate anchor &x (first on line 1)", 2),
    ("a: 1\n---\nb: 2\n", "single document", 2),
    ("when: 2001-13-45\n", "cannot read '2001-13-45' as tag:yaml.org,2002:timestamp", 1),
    ("n: !!int twelve\n", "cannot read 'twelve'", 1),
    ("a: 1\nb:\n  c: 1\n  c: 2\n", "duplicate key 'c' (first on line 3)", 4),
    ("a: 1\nb: \x08\n", "unacceptable character #x0008", 2),
])
def test_malformed_documents_name_file_and_line(text, message, line):
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")) as e:
        load_yaml(text, "f.yaml")
    assert e.value.line == line
    assert str(e.value).startswith(f"f.yaml:{line}: ")


def test_decoding_errors_name_the_file_and_line(tmp_path):
    p = tmp_path / "latin1.yaml"
    p.write_bytes("study: ok\nname: caf\u00e9\n".encode("latin-1"))
    with pytest.raises(ConfigError, match=r"not UTF-8 text: byte 0xe9 at offset 19") as e:
        load_yaml_file(p)
    assert str(e.value).startswith(f"{p}:2: ")
    p.write_bytes("a: \u00e9\n".encode("utf-16"))          # with its byte-order mark
    assert load_yaml_file(p)[0] == {"a": "\u00e9"}
    p.write_bytes("\ufeffa: 1\n".encode())                  # UTF-8 with a BOM
    assert load_yaml_file(p)[0] == {"a": 1}


def test_text_with_lone_surrogates_is_a_config_error():
    with pytest.raises(ConfigError, match=r"not valid text|unacceptable character #xd800"):
        load_yaml("a: \ud800\n")


def test_a_directory_is_a_config_error_naming_it(tmp_path):
    with pytest.raises(ConfigError, match="cannot read") as e:
        load_yaml_file(tmp_path)
    assert str(tmp_path) in str(e.value)
