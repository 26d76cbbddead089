"""nova: the operator's command line client (``nova.cli.shell``)."""

import sys

from nova.cli import shell


def main(argv=None) -> int:
    return shell.main(argv)


if __name__ == '__main__':
    sys.exit(main())
