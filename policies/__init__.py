"""The seedance cost policy pack: rules as pure functions over plan resources, run by `seedance check`
offline and by Pulumi CrossGuard (`pulumi preview --policy-pack policies`)."""
