"""The Spot / On-Demand / RI mix of GPU groups: the mix model, the planner, workload classes, the lock."""
