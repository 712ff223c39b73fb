"""Small, documented example evaluators used by the README and `make demo`."""

__all__: list[str] = []  # import the examples by module name
