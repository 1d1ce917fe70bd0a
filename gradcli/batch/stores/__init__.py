"""Points in chunked storage and results written to it: .npy parts, Zarr, Parquet."""
