"""Small, documented example evaluators used by the README and `make demo`."""
