"""What the XO sees, for people: ``a0org status`` (:mod:`.status`), ``watch`` (:mod:`.watch`)
and ``tail`` (:mod:`.tail`), over the rows and files of :mod:`.rows`.

The views only read the volume, so they are safe to run beside a running XO and its
units, as often as wanted. Each unit's row is computed the way the XO judges it: the
same freshness thresholds (the unit's own doctrine), and a unit whose reports stopped
shows health ``unknown``, never the health it last reported.
"""
