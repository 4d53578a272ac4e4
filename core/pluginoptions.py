"""The ``kplane serve`` flags plugins add (``kplane_add_options``), as pytest's ``pytest_addoption``.

A plugin calls ``parser.add_argument(...)`` as on an argparse parser. Each flag is checked at once
against ``kplane serve``'s own flags and those of the plugins before it (argparse's errors: a
flag taken, a bad ``action``), so that a clash names the plugin that caused it; only once every
plugin has added its own are they put on the command line (:meth:`PluginOptions.attach`), in a
group per plugin for ``--help``. The value of each flag reaches the plugin that added it as
``config.plugin_settings[plugin_name][dest]``; one ``dest`` serves one flag only, since all the
flags share one namespace (and ``@pytest.mark.kplane(dest=value)`` names a flag by its ``dest``).
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any


@dataclass(eq=False)
class Option:
    flags: tuple[str, ...]
    kwargs: dict[str, Any]
    dest: str
    plugin: str = ""  # the plugin that added it (set by the plugin manager after its hook)


@dataclass(eq=False)
class PluginOptions:
    """What ``kplane_add_options`` gets as ``parser``. ``command``: the parser the flags join
    (None where nothing is parsed, as the pytest plugin, which only looks flags up)."""

    command: argparse.ArgumentParser | None = None
    options: list[Option] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._check = self._checker()

    def add_argument(self, *flags: str, **kwargs: Any) -> None:
        """Add a flag, with argparse's ``add_argument`` arguments."""
        action = self._check.add_argument(*flags, **kwargs)
        if action.dest in self._dests:
            self._check = self._checker()  # without the refused flag
            raise ValueError(f"{'/'.join(flags)}: dest {action.dest!r} is another flag's")
        self._dests.add(action.dest)
        self.options.append(Option(tuple(flags), dict(kwargs), action.dest))

    def remove(self, options: Iterable[Option]) -> None:
        """Take out the flags of a plugin left out (``--skip-broken-plugins``)."""
        gone = {id(o) for o in options}
        self.options = [o for o in self.options if id(o) not in gone]
        self._check = self._checker()

    def find(self, dest: str) -> Option | None:
        return next((o for o in self.options if o.dest == dest), None)

    def attach(self) -> None:
        """Put the flags on the command's parser, a ``--help`` section per plugin."""
        assert self.command is not None
        groups: dict[str, Any] = {}
        for option in self.options:
            if option.plugin not in groups:
                groups[option.plugin] = self.command.add_argument_group(f"plugin {option.plugin}")
            groups[option.plugin].add_argument(*option.flags, **option.kwargs)

    def settings(self, args: argparse.Namespace) -> dict[str, dict[str, Any]]:
        """The parsed values by plugin and ``dest``: ``ServerConfig.plugin_settings``."""
        settings: dict[str, dict[str, Any]] = {}
        for option in self.options:
            settings.setdefault(option.plugin, {})[option.dest] = getattr(args, option.dest)
        return settings

    def defaults(self) -> argparse.Namespace:
        """Every flag's value when none is given, as ``kplane serve`` parses it (a string
        ``default`` through its ``type``; a required flag: None), for a caller that parses no
        command line (the pytest plugin)."""
        parser = argparse.ArgumentParser(add_help=False)
        for option in self.options:
            parser.add_argument(*option.flags, **{**option.kwargs, "required": False})
        return parser.parse_args([])

    def _checker(self) -> argparse.ArgumentParser:
        """A scratch parser with the command's flags and those added so far, to check the next."""
        check = argparse.ArgumentParser(add_help=False, parents=[self.command] if self.command is not None else [])
        self._dests = {action.dest for action in check._actions}
        for option in self.options:
            if option.dest not in self._dests:  # else on the command already: attached, then one was removed
                check.add_argument(*option.flags, **option.kwargs)
            self._dests.add(option.dest)
        return check
