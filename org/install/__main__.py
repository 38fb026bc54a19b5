"""``python -m org.install``: what install_all.sh and install_supervisor_loop.sh run."""

import sys

from org.install.cli import main

sys.exit(main())
