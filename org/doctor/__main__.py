"""``python -m org.doctor``."""

import sys

from org.doctor.cli import main

sys.exit(main())
