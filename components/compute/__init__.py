"""GPU node groups: the Auto Scaling group and launch template, node bootstrap and role, labels, the
device plugin and spot interruption handling."""
