"""One command at many points (``--batch``): the plan, its passes, the output, Dask."""
