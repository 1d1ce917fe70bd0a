"""``python -m gradcli``."""

from .cli.app import main

if __name__ == "__main__":  # not when a worker process (--dask local:N) imports it anew
    main()
