import sys

from glns.cli import main

sys.exit(main())
