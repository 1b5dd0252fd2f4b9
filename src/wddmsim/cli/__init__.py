"""The command line: ``wddmsim`` and its commands (the front door; :mod:`wddmsim.entry` starts it).

- :mod:`.app`: the click group, ``run``, ``demo``, ``compare`` and the commands' lazy table;
- :mod:`.util`: what the commands share (loading a scenario or a driver, usage errors, outputs);
- one module per command that lives on its own, imported only when it runs: :mod:`.check`,
  :mod:`.structures` (``layout``, ``decode``), :mod:`.rules`, :mod:`.sweep`, :mod:`.replay`,
  :mod:`.demo`.

Nothing in the model imports this package; it imports the run (:mod:`wddmsim.runner`), the outputs
(:mod:`wddmsim.output`) and whatever a command needs.
"""

from .app import LAZY_COMMANDS, ScenarioProblems, UserError, build_system, execute, load_driver, main, parse_settings

__all__ = ["LAZY_COMMANDS", "ScenarioProblems", "UserError", "build_system", "execute", "load_driver", "main",
           "parse_settings"]
