"""The metrics pipeline: Prometheus, the adapter that feeds Triton's HPAs, the DCGM exporter."""
