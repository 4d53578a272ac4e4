"""``kplane serve`` with tracemalloc on, for measuring what a server holds (the density bench's
memory per cached object). RSS cannot tell it once the growth is small: the heap reuses what
start-up freed. SIGUSR1 writes the traced bytes, after a collection, to ``DATA_DIR/traced``.

    python traced_server.py serve --data-dir DIR ...   # as kplane serve
"""

from __future__ import annotations

import gc
import signal
import sys
import tracemalloc
from pathlib import Path
from types import FrameType

from kplane.core.cli import main


def _dump_to(path: Path) -> None:
    def dump(signum: int, frame: FrameType | None) -> None:
        gc.collect()
        path.write_text(str(tracemalloc.get_traced_memory()[0]))
    signal.signal(signal.SIGUSR1, dump)


if __name__ == "__main__":
    tracemalloc.start()
    _dump_to(Path(sys.argv[sys.argv.index("--data-dir") + 1]) / "traced")
    sys.exit(main())
