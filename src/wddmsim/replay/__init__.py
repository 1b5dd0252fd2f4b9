"""Real PresentMon captures beside the model: read them (:mod:`.capture`), write frames back in
PresentMon's column sets (:mod:`.columns`), compare a capture with a model run swap chain by swap
chain (:mod:`.compare`) and plot the two (:mod:`.plots`).

This package imports nothing of the simulator; it works on frames, whoever produced them.
"""
