"""Leaf modules every layer may use; they import nothing of the project.

- :mod:`.units`: spans of virtual time and sizes in bytes, read and written (``"2ms"``, ``"64KiB"``);
- :mod:`.inputbound`: input files read with a bound, so no file makes a command read without end.
"""
