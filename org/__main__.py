import sys

from org.cli import main

sys.exit(main())
