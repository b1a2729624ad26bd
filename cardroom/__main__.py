import sys

from cardroom.cli import main

sys.exit(main())
