"""The DDI structures, one module per area of the submission path.

Spec: Microsoft's reference page of each structure (its syntax block gives member order and types)
and the version guards of the WDK headers; tools/msvc_layouts/DECISIONS.md where they disagree.
"""
