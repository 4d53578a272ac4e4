"""Plugins' ``kplane serve`` flags (``kplane_add_options``): on the command line under the
plugin's name, their values handed to that plugin by dest, a clash the plugin's fault."""

from __future__ import annotations

import argparse
import asyncio

import pytest

from kplane.core import cli
from kplane.core.hookspecs import hookimpl
from kplane.core.pluginoptions import PluginOptions
from kplane.core.plugins import SKIPPED, PluginError, PluginManager


class Sizes:
    @hookimpl
    def kplane_add_options(self, parser: PluginOptions) -> None:
        parser.add_argument("--widgets-max-size", dest="widgets_max_size", type=int, default=10, metavar="N",
                            help="largest widget allowed")


class Clash:
    def __init__(self, *flags: str, dest: str | None = None) -> None:
        self.flags, self.dest = flags, dest

    @hookimpl
    def kplane_add_options(self, parser: PluginOptions) -> None:
        parser.add_argument("--clash-first", action="store_true")
        parser.add_argument(*self.flags, **({"dest": self.dest} if self.dest else {}))


def command() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="kplane serve")
    parser.add_argument("--port", type=int, default=6443)
    return parser


def test_a_plugins_flags_reach_it_by_dest() -> None:
    plugins, options = PluginManager(), PluginOptions(command())
    plugins.register(Sizes(), "widgets")
    plugins.add_options(options)
    options.attach()
    assert options.command is not None
    args = options.command.parse_args(["--widgets-max-size", "3", "--port", "1"])
    assert options.settings(args) == {"widgets": {"widgets_max_size": 3}}
    assert options.settings(options.command.parse_args([])) == {"widgets": {"widgets_max_size": 10}}
    assert "plugin widgets:\n  --widgets-max-size N  largest widget allowed" in options.command.format_help()


@pytest.mark.parametrize("clash", [Clash("--port"), Clash("--other-port", dest="port"),
                                   Clash("--widgets-max-size"), Clash("--sizes", dest="widgets_max_size")],
                         ids=["flag", "dest", "another plugin's flag", "another plugin's dest"])
def test_a_flag_taken_breaks_the_plugin_that_adds_it(clash: Clash) -> None:
    plugins, options = PluginManager(), PluginOptions(command())
    plugins.register(Sizes(), "widgets")
    plugins.register(clash, "clash")
    with pytest.raises(PluginError, match=r"plugin 'clash' failed in kplane_add_options: (ArgumentError|ValueError)"):
        plugins.add_options(options)


def test_a_skipped_plugins_flags_are_taken_out() -> None:
    plugins, options = PluginManager(skip_broken=True), PluginOptions(command())
    plugins.register(Clash("--port"), "clash")
    plugins.register(Sizes(), "widgets")
    plugins.add_options(options)
    assert plugins.infos["clash"].status == SKIPPED
    assert [(o.plugin, o.dest) for o in options.options] == [("widgets", "widgets_max_size")]
    options.attach()
    assert options.command is not None
    with pytest.raises(SystemExit):
        options.command.parse_args(["--clash-first"])


def test_a_plugin_broken_after_the_flags_are_attached_leaves_the_others_flags_working() -> None:
    """--skip-broken-plugins takes a plugin out after the command line was read (a later hook
    broke): the flags of the plugins that stay are on the command already, and stay usable."""
    plugins, options = PluginManager(skip_broken=True), PluginOptions(command())
    plugins.register(Sizes(), "widgets")
    plugins.register(Clash("--clash-later"), "later")
    plugins.add_options(options)
    options.attach()
    options.remove([o for o in options.options if o.plugin == "later"])
    assert [(o.plugin, o.dest) for o in options.options] == [("widgets", "widgets_max_size")]
    assert options.command is not None and options.command.parse_args(["--widgets-max-size", "3"]).widgets_max_size == 3


class Prefixes:
    """Flags that are prefixes of ``kplane serve``'s own: --plugins, --skip-broken-plugins, --verbose."""

    @hookimpl
    def kplane_add_options(self, parser: PluginOptions) -> None:
        for flag in ("--plugin", "--skip", "--verb"):
            parser.add_argument(flag)


def test_a_plugin_flag_that_is_a_prefix_of_a_serve_flag_is_the_plugins_in_both_readings() -> None:
    """``kplane serve`` reads its arguments twice (which plugins, then everything); without
    abbreviations both readings give ``--plugin`` to the plugin, never ``--plugins``."""
    _, serve = cli._parser()
    argv = ["--plugin", "a", "--skip", "b", "--verb", "c"]
    known, rest = serve.parse_known_args(argv)
    assert (known.plugins, known.skip_broken_plugins, known.verbose, rest) == (None, False, False, argv)
    plugins, options = PluginManager(), PluginOptions(serve)
    plugins.register(Prefixes(), "prefixes")
    plugins.add_options(options)
    options.attach()
    assert options.settings(serve.parse_args(argv)) == {"prefixes": {"plugin": "a", "skip": "b", "verb": "c"}}
    with pytest.raises(SystemExit):
        serve.parse_args(["--port", "1", "--no-contr"])


class Waits:
    @hookimpl
    async def kplane_add_options(self, parser: PluginOptions) -> None:
        await asyncio.sleep(0)
        parser.add_argument("--waits-flag")


@pytest.mark.parametrize("skip_broken", [False, True])
def test_an_add_options_that_awaits_is_its_plugins_failure(skip_broken: bool) -> None:
    """``kplane_add_options`` runs before any event loop: one that awaits something is named (and
    taken out with ``--skip-broken-plugins``) like any other failure in it."""
    plugins, options = PluginManager(skip_broken=skip_broken), PluginOptions(command())
    plugins.register(Waits(), "waits")
    plugins.register(Sizes(), "widgets")
    if not skip_broken:
        with pytest.raises(PluginError, match=r"plugin 'waits' failed in kplane_add_options: RuntimeError: "
                                              r"kplane_add_options is called before the event loop runs"):
            plugins.add_options(options)
        return
    plugins.add_options(options)
    assert plugins.infos["waits"].status == SKIPPED
    assert [(o.plugin, o.dest) for o in options.options] == [("widgets", "widgets_max_size")]


def test_an_async_add_options_that_awaits_nothing_adds_its_flags() -> None:
    class Quick:
        @hookimpl
        async def kplane_add_options(self, parser: PluginOptions) -> None:
            parser.add_argument("--quick-flag")

    plugins, options = PluginManager(), PluginOptions(command())
    plugins.register(Quick(), "quick")
    plugins.add_options(options)
    assert [(o.plugin, o.dest) for o in options.options] == [("quick", "quick_flag")]
