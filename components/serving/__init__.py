"""Triton serving: the component and its manifests, serving capacity, the model repository bucket."""
