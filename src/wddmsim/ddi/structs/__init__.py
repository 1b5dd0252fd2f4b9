"""The DDI structures, one module per area of the submission path.

Spec: ddi-facts.md sections 2-9; the seeds in ../shared/seeds/.
"""
