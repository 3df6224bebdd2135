"""The reproduction report: claims scorecard, bits per parameter, capacity by search, one HTML page.

Everything here reads the families' aggregate Parquet files (never trains), except `capacity`, which
trains MLT models through the MLT family's own grid-point runner to bracket each architecture's capacity.
"""
