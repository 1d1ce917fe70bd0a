"""``python -m gradcli``."""

from .cli import main

main()
