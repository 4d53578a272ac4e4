"""Widgets for kplane: the widgets.example.com API group (see plugin.py)."""
