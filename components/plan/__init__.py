"""Reading a plan: the resource kinds and input names the estimate and the policies inspect, and unknowns."""
