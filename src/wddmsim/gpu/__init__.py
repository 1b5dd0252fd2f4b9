"""The simulated GPU: the hardware side of the model, which knows nothing of Windows.

:mod:`.memory` is the GPU's sparse physical memory (pages allocated on first write, watchers on
8-byte locations); :mod:`.commands` is its command set (packet format, encoders, a chainable
:class:`CommandBuffer`, the decoder and a disassembler). The engines that execute the packets are
described in docs/gpu.md; the packet format in docs/gpu-commands.md. :mod:`.scheduler` is the
context-management processor of hardware scheduling (``GPU.hw_scheduler(engine_index)``), whose
decisions are its policy's (:mod:`.policy`: the band rules by default).
:mod:`.mmio` is the register interface (``GPU.mmio``), the only view of the GPU a driver has
(docs/gpu-programming.md).
"""

from .commands import *  # noqa: F403
from .commands import __all__ as _commands_all
from .memory import *  # noqa: F403
from .memory import __all__ as _memory_all

__all__ = [*_memory_all, *_commands_all]
