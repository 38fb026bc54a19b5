"""The macrocosm: one XO supervising many units through SALUTE files on a shared volume.

Units publish their SALUTE report (with the radio check's inputs) to the volume; the
XO runs the same detectors over each report and answers with steering files in the
unit's inbox, which the unit injects before its next prompt.
"""
