"""kplane's machinery: internal. Plugins, examples and controllers import :mod:`kplane.api`
instead; what is here may change between releases (``.importlinter`` holds the rules)."""
